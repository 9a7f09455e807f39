package experiments

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"time"

	"extrapolate/internal/strictyaml"
	"go.yaml.in/yaml/v3"
)

// Comparison is a comparison config: several runs, each over several seeds, trained at the same
// length on the same data and scored on the same validation tokens, and the claims to check.
type Comparison struct {
	// Name names the comparison and its results folder.
	Name  string   `yaml:"comparison"`
	Seeds []uint64 `yaml:"seeds"`
	// Set overrides fields of every run, as dotted keys, like train's -set.
	Set  map[string]yaml.Node `yaml:"set,omitempty"`
	Runs []RunSpec            `yaml:"runs"`
	// Claims lists the claims this comparison checks: CI fails when one is not reproduced.
	// The report gives a verdict on every claim whatever this lists.
	Claims []string `yaml:"claims,omitempty"`

	globalSets []string // Set as key=value
	cliSets    []string // the command line's -set, applied last
	dir        string   // the folder of the comparison file, where bare run names are looked up
}

// RunSpec is one entry of a comparison: a config from configs/ with optional overrides.
type RunSpec struct {
	Config string               `yaml:"config"`
	Label  string               `yaml:"label,omitempty"`
	Set    map[string]yaml.Node `yaml:"set,omitempty"`
}

// Planned is one (run, seed) of a comparison, resolved.
type Planned struct {
	Label  string
	Seed   uint64
	Config Config
	Dir    string
}

// Files of a comparison folder, beside runs/.
const (
	ReportFile = "REPORT.md"
	RunsDir    = "runs"
)

// isComparison tells a comparison config from a run config by its shape.
func isComparison(root *yaml.Node) bool {
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == "comparison" || root.Content[i].Value == "runs" {
			return true
		}
	}
	return false
}

// IsComparison reports whether the config file at path is a comparison.
func IsComparison(path string) (bool, error) {
	root, err := readYAML(path)
	if err != nil {
		return false, err
	}
	return isComparison(root), nil
}

// LoadComparison reads a comparison config and resolves every run's config: the run's config
// file, then the comparison's set, the run's own set, and sets (from the command line) last.
func LoadComparison(path string, sets []string) (*Comparison, error) {
	root, err := readYAML(path)
	if err != nil {
		return nil, err
	}
	var c Comparison
	if err := strictyaml.Decode(path, root, &c); err != nil {
		return nil, err
	}
	if c.Name == "" {
		base := filepath.Base(path)
		c.Name = strings.TrimSuffix(base, filepath.Ext(base))
	}
	if !nameRE.MatchString(c.Name) {
		return nil, fmt.Errorf("%s: comparison: %q, want letters, digits, '.', '_' or '-'", path, c.Name)
	}
	if len(c.Seeds) == 0 {
		return nil, fmt.Errorf("%s: seeds: want at least one seed", path)
	}
	if len(c.Runs) == 0 {
		return nil, fmt.Errorf("%s: runs: want at least one run", path)
	}
	for _, cl := range c.Claims {
		if _, ok := claimByID(cl); !ok {
			return nil, fmt.Errorf("%s: claims: unknown claim %q (known: %s)", path, cl, strings.Join(claimIDs(), ", "))
		}
	}
	global, err := setList(c.Set)
	if err != nil {
		return nil, fmt.Errorf("%s: set: %w", path, err)
	}
	for _, s := range sets {
		if key, _, _ := strings.Cut(s, "="); key == "seed" || key == "name" {
			return nil, fmt.Errorf("-set %s: a comparison sets each run's %s itself (seeds:, labels)", key, key)
		}
	}
	c.globalSets, c.cliSets = global, sets
	c.dir = filepath.Dir(path)
	seenSeed := map[uint64]bool{}
	for _, s := range c.Seeds {
		if seenSeed[s] {
			return nil, fmt.Errorf("%s: seeds: %d given twice", path, s)
		}
		seenSeed[s] = true
	}
	if _, err := c.Plan(""); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &c, nil
}

// setList turns a set mapping into key=value overrides, in key order.
func setList(m map[string]yaml.Node) ([]string, error) {
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []string
	for _, k := range keys {
		v := m[k]
		b, err := yaml.Marshal(&v)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", k, err)
		}
		out = append(out, k+"="+strings.TrimSpace(string(b)))
	}
	return out, nil
}

// Plan resolves every (run, seed) of the comparison, in a fixed order, with their folders under
// dir. Every run must train at the same length on the same data and be scored on the same tokens.
func (c *Comparison) Plan(dir string) ([]Planned, error) {
	var out []Planned
	var first *Config
	labels := map[string]bool{}
	for i, spec := range c.Runs {
		if spec.Config == "" {
			return nil, fmt.Errorf("runs[%d].config: missing", i)
		}
		sets, err := setList(spec.Set)
		if err != nil {
			return nil, fmt.Errorf("runs[%d].set: %w", i, err)
		}
		path := spec.Config
		if isBareName(path) {
			path = filepath.Join(c.dir, strings.TrimSuffix(path, ".yaml")+".yaml")
		}
		// The comparison's set, then the run's own, then the command line's.
		all := append(append(append([]string{}, c.globalSets...), sets...), c.cliSets...)
		base, err := Load(path, all)
		if err != nil {
			return nil, fmt.Errorf("runs[%d]: %w", i, err)
		}
		label := spec.Label
		if label == "" {
			label = base.Name
		}
		if !nameRE.MatchString(label) {
			return nil, fmt.Errorf("runs[%d].label: %q, want letters, digits, '.', '_' or '-'", i, label)
		}
		if labels[label] {
			return nil, fmt.Errorf("runs[%d].label: %q is used twice; give one a label", i, label)
		}
		labels[label] = true
		if first == nil {
			first = &base
		} else if err := sameProtocol(*first, base); err != nil {
			return nil, fmt.Errorf("runs[%d] (%s): %w", i, label, err)
		}
		for _, seed := range c.Seeds {
			rc := base
			rc.Seed = seed
			rc.Name = fmt.Sprintf("%s-s%d", label, seed)
			out = append(out, Planned{Label: label, Seed: seed, Config: rc, Dir: filepath.Join(dir, RunsDir, rc.Name)})
		}
	}
	return out, nil
}

// sameProtocol checks that two runs train at the same length on the same data and are scored on
// the same validation tokens at the same lengths.
func sameProtocol(a, b Config) error {
	switch {
	case a.Train.SeqLen != b.Train.SeqLen:
		return fmt.Errorf("train.seq_len %d differs from the first run's %d", b.Train.SeqLen, a.Train.SeqLen)
	case a.Data != b.Data:
		return fmt.Errorf("data %+v differs from the first run's %+v", b.Data, a.Data)
	case a.Eval.Tokens != b.Eval.Tokens:
		return fmt.Errorf("eval.tokens %d differs from the first run's %d", b.Eval.Tokens, a.Eval.Tokens)
	case !reflect.DeepEqual(a.Eval.Lengths, b.Eval.Lengths):
		return fmt.Errorf("eval.lengths %v differ from the first run's %v", b.Eval.Lengths, a.Eval.Lengths)
	case a.Eval.Protocol() != b.Eval.Protocol():
		return fmt.Errorf("eval.stride: %s differs from the first run's %s", b.Eval.Protocol(), a.Eval.Protocol())
	}
	return nil
}

// Shard selects every n-th run starting at i (0 ≤ i < n), so that a comparison can be split
// between processes or machines.
type Shard struct{ I, N int }

// ParseShard reads "i/n".
func ParseShard(s string) (Shard, error) {
	var sh Shard
	if _, err := fmt.Sscanf(s, "%d/%d", &sh.I, &sh.N); err != nil || sh.N <= 0 || sh.I < 0 || sh.I >= sh.N || fmt.Sprintf("%d/%d", sh.I, sh.N) != s {
		return Shard{}, fmt.Errorf("-shard: %q, want i/n with 0 ≤ i < n, e.g. 0/4", s)
	}
	return sh, nil
}

// CheckShard refuses a shard that would run nothing: one of more shards than the comparison
// has runs.
func (c *Comparison) CheckShard(s Shard) error {
	plan, err := c.Plan("")
	if err != nil {
		return err
	}
	if s.N > len(plan) {
		return fmt.Errorf("-shard: %d/%d, but the comparison has %d runs, so some shards would run nothing; want n at most %d", s.I, s.N, len(plan), len(plan))
	}
	return nil
}

// Selects reports whether the shard runs the k-th planned run.
func (s Shard) Selects(k int) bool { return s.N <= 1 || k%s.N == s.I }

// Runner runs a comparison into Dir.
type Runner struct {
	Comparison *Comparison
	Dir        string
	Shard      Shard
	Overwrite  bool
	Progress   io.Writer
	// Command is the command line, recorded in the report.
	Command string
}

// Execute runs the shard's runs that are not done yet, then, when every run of the comparison
// has results, writes the report. It returns the report, or nil when runs are still missing.
func (r *Runner) Execute(ctx context.Context) (*Report, error) {
	plan, err := r.Comparison.Plan(r.Dir)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Join(r.Dir, RunsDir), 0o755); err != nil {
		return nil, fmt.Errorf("results folder: %w", err)
	}
	for k, p := range plan {
		if !r.Shard.Selects(k) {
			continue
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%w before %s", ErrInterrupted, p.Config.Name)
		}
		if done(p) && !r.Overwrite {
			r.say("%s: done, skipped\n", p.Config.Name)
			continue
		}
		r.say("run %d/%d: %s\n", k+1, len(plan), p.Config.Name)
		// Another config's run in the folder is replaced; the same config's resumes.
		run := &Run{Config: p.Config, Dir: p.Dir, Overwrite: r.Overwrite || !sameConfigIn(p), Progress: r.Progress,
			SharedTraining: sharedTraining(plan, k)}
		res, err := run.Execute(ctx)
		switch {
		case errors.Is(err, ErrDiverged):
			r.say("%s: failed: %v\n", p.Config.Name, err)
		case err != nil:
			return nil, fmt.Errorf("%s: %w", p.Config.Name, err)
		default:
			r.say("%s", Summary(res))
		}
	}
	return r.WriteReport()
}

func (r *Runner) say(format string, args ...any) {
	if r.Progress != nil {
		fmt.Fprintf(r.Progress, format, args...)
	}
}

// done reports whether a planned run has results of its exact config.
func done(p Planned) bool {
	res, err := readResult(p)
	return err == nil && res != nil
}

// readResult reads a planned run's results: nil when it has none of its exact config.
func readResult(p Planned) (*Result, error) {
	path := filepath.Join(p.Dir, ResultsJSON)
	b, err := os.ReadFile(path)
	if err != nil || !sameConfigIn(p) {
		return nil, nil
	}
	var res Result
	if err := json.Unmarshal(b, &res); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if res.ConfigHash != p.Config.Hash() {
		return nil, nil
	}
	for _, l := range res.Lengths {
		if l.Applicable && (l.Loss == nil || l.Perplexity == nil) {
			return nil, fmt.Errorf("%s: length %d is applicable but has no loss or perplexity", path, l.Length)
		}
	}
	return &res, nil
}

func sameConfigIn(p Planned) bool {
	b, err := os.ReadFile(filepath.Join(p.Dir, ConfigFile))
	return err == nil && string(b) == string(p.Config.Marshal())
}

// sharedTraining finds an earlier planned run whose training is the same as the k-th's: RoPE
// scalings apply only when evaluating, so rope and rope with a scaling, without fine-tuning,
// train the same weights from the same seed. It returns that run's checkpoint, when finished.
func sharedTraining(plan []Planned, k int) string {
	key := trainingKey(plan[k].Config)
	if key == "" {
		return ""
	}
	for _, p := range plan[:k] {
		if trainingKey(p.Config) != key {
			continue
		}
		path := filepath.Join(p.Dir, CheckpointFile)
		if tr, err := LoadCheckpoint(path); err == nil && tr.Finished && trainingKey(tr.Config) == key {
			return path
		}
	}
	return ""
}

// trainingKey is the part of a config that decides the trained weights: everything but the
// name, the evaluation and the RoPE scaling. A run that fine-tunes has none: its scaling
// shapes its weights.
func trainingKey(c Config) string {
	if c.Train.Finetune != nil {
		return ""
	}
	c = c.mainPhase()
	c.Name = ""
	c.Eval = Eval{}
	return string(c.Marshal())
}

// MissingRuns lists the planned runs without results of their exact config, of total runs.
func (r *Runner) MissingRuns() (missing []string, total int, err error) {
	plan, err := r.Comparison.Plan(r.Dir)
	if err != nil {
		return nil, 0, err
	}
	for _, p := range plan {
		res, err := readResult(p)
		if err != nil {
			return nil, 0, err
		}
		if res == nil {
			missing = append(missing, p.Config.Name)
		}
	}
	return missing, len(plan), nil
}

// WriteReport gathers the results of every run into the comparison's tables, plot and
// REPORT.md. With runs missing (shards still running) it writes nothing and returns nil.
func (r *Runner) WriteReport() (*Report, error) {
	plan, err := r.Comparison.Plan(r.Dir)
	if err != nil {
		return nil, err
	}
	rep := &Report{Comparison: r.Comparison, Command: r.Command, Generated: time.Now().UTC()}
	var missing []string
	for _, p := range plan {
		res, err := readResult(p)
		if err != nil {
			return nil, err
		}
		if res == nil {
			missing = append(missing, p.Config.Name)
			continue
		}
		rep.Runs = append(rep.Runs, RunResult{Label: p.Label, Seed: p.Seed, Config: p.Config, Result: res, Dir: p.Dir})
	}
	if len(missing) > 0 {
		r.say("%d of %d runs have results; missing: %s. Run the report again when every shard has finished.\n",
			len(plan)-len(missing), len(plan), strings.Join(missing, ", "))
		return nil, nil
	}
	rep.aggregate()
	rep.judge()
	if err := rep.write(r.Dir); err != nil {
		return nil, err
	}
	return rep, nil
}

// Failed lists the claims the comparison checks that were not reproduced.
func (rep *Report) Failed() []ClaimResult {
	var out []ClaimResult
	for _, id := range rep.Comparison.Claims {
		for _, c := range rep.Claims {
			if c.ID == id && c.Verdict != Reproduced {
				out = append(out, c)
			}
		}
	}
	return out
}

// positionOf names a run's position scheme with its scaling and attention temperature.
func positionOf(c Config) string {
	s := c.Position.Scheme
	if c.Position.Scaling != nil {
		s += " " + scalingName(c.Position)
	}
	if c.Attention.Scale != "" {
		s += " + " + c.Attention.Scale
	}
	return s
}
