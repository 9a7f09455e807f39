package compare

import (
	"fmt"
	"maps"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"

	"extrapolate/experiments/claims"
	"extrapolate/experiments/config"
	"extrapolate/experiments/measure"
	"extrapolate/internal/strictyaml"
)

// Config is a comparison's config: several runs, each over several seeds, trained at the same
// length on the same data and scored on the same validation tokens, and the claims to check.
type Config struct {
	// Name names the comparison and its results folder.
	Name  string   `yaml:"comparison"`
	Seeds []uint64 `yaml:"seeds"`
	// Set overrides fields of every run, as dotted keys, like train's -set.
	Set  map[string]yaml.Node `yaml:"set,omitempty"`
	Runs []RunSpec            `yaml:"runs"`
	// Claims lists the claims this comparison checks: CI fails when one is not reproduced.
	// The report gives a verdict on every claim whatever this lists.
	Claims []string `yaml:"claims,omitempty"`
	// Grid, when given, runs the whole comparison once at each of its points (a model size, a
	// training budget), each in a folder of its own, and judges every claim at every point.
	Grid []Point `yaml:"grid,omitempty"`

	globalSets []config.Override // Set, and a grid point's set at that point
	cliSets    []string          // the command line's -set, applied last
	path       string            // the comparison file, which the settings' errors name
	dir        string            // the folder of the comparison file, where bare run names are looked up
}

// Point is one point of a comparison's grid: its name, which names its folder, and the settings
// that make it, applied after the comparison's set and before each run's own.
type Point struct {
	Name string               `yaml:"name"`
	Set  map[string]yaml.Node `yaml:"set,omitempty"`
}

// RunSpec is one entry of a comparison: a config from configs/ with optional overrides.
type RunSpec struct {
	Config string `yaml:"config,omitempty"`
	// Checkpoints, in place of Config, are models trained elsewhere, one for each of the
	// comparison's seeds in order: imported (cmd/import) or another comparison's. Each is
	// evaluated with the config it was trained with, through the same measures, report and
	// claims, and nothing is trained; set may change only its evaluation. A relative path is
	// the working directory's, as cmd/eval's -checkpoint is.
	Checkpoints []string             `yaml:"checkpoints,omitempty"`
	Label       string               `yaml:"label,omitempty"`
	Set         map[string]yaml.Node `yaml:"set,omitempty"`
}

// Planned is one (run, seed) of a comparison, resolved.
type Planned struct {
	// Point is the grid point's name, "" without a grid.
	Point string
	Label string
	Seed  uint64
	// Resolved is the run's config, resolved, for the run to carry: the seeds of a run share
	// its schemes.
	Resolved *config.Resolved
	Dir      string
	// Checkpoint is the finished checkpoint of a model trained elsewhere that the run
	// evaluates (RunSpec.Checkpoints), "" for a run that trains.
	Checkpoint string
}

// Config is the run's config (Resolved.Config).
func (p Planned) Config() config.Config { return p.Resolved.Config() }

// ID names a planned run: its name, after its grid point's.
func (p Planned) ID() string {
	if p.Point == "" {
		return p.Config().Name
	}
	return p.Point + "/" + p.Config().Name
}

// Files of a comparison folder, beside runs/.
const (
	ReportFile     = "REPORT.md"
	RunsDir        = "runs"
	ComparisonJSON = "ppl_by_run.json"
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

// IsConfig reports whether the config file at path is a comparison's, not a run's.
func IsConfig(path string) (bool, error) {
	root, err := config.ReadYAML(path)
	if err != nil {
		return false, err
	}
	return isComparison(root), nil
}

// Load reads a comparison config and checks every run's config: the run's config
// file, then the comparison's set, the run's own set, and sets (from the command line) last.
func Load(path string, sets []string) (*Config, error) {
	p, err := LoadPlan(path, sets)
	if err != nil {
		return nil, err
	}
	return p.Comparison, nil
}

// LoadPlan reads a comparison config as Load does and returns its plan, every run's
// config resolved once, for a Runner to carry.
func LoadPlan(path string, sets []string) (*Plan, error) {
	root, err := config.ReadYAML(path)
	if err != nil {
		return nil, err
	}
	var c Config
	if err := strictyaml.Decode(path, root, &c); err != nil {
		return nil, err
	}
	if c.Name == "" {
		base := filepath.Base(path)
		c.Name = strings.TrimSuffix(base, filepath.Ext(base))
	}
	if err := config.CheckName("comparison", c.Name); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(c.Seeds) == 0 {
		return nil, fmt.Errorf("%s: seeds: want at least one seed", path)
	}
	if len(c.Runs) == 0 {
		return nil, fmt.Errorf("%s: runs: want at least one run", path)
	}
	for _, cl := range c.Claims {
		if !claims.Known(cl) {
			return nil, fmt.Errorf("%s: claims: unknown claim %q (known: %s)", path, cl, strings.Join(claims.IDs(), ", "))
		}
	}
	if _, err := setList(c.Set); err != nil {
		return nil, fmt.Errorf("%s: set: %w", path, err)
	}
	for _, s := range sets {
		if key, _, _ := strings.Cut(s, "="); key == "seed" || key == "name" {
			return nil, fmt.Errorf("-set %s: a comparison sets each run's %s itself (seeds:, labels)", key, key)
		}
	}
	c.path, c.dir = path, filepath.Dir(path)
	c.globalSets, c.cliSets = c.overrides("set", c.Set), sets
	if err := c.resolveGrid(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	seenSeed := map[uint64]bool{}
	for _, s := range c.Seeds {
		if seenSeed[s] {
			return nil, fmt.Errorf("%s: seeds: %d given twice", path, s)
		}
		seenSeed[s] = true
	}
	p, err := c.Resolve()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return p, nil
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

// overrides are the settings of a set mapping of the comparison's file, field, in key order:
// each carries its node, so that an error in it names the field and its line in the file.
func (c *Config) overrides(field string, m map[string]yaml.Node) []config.Override {
	keys := slices.Sorted(maps.Keys(m))
	out := make([]config.Override, len(keys))
	for i, k := range keys {
		v := m[k]
		out[i] = config.Override{Key: k, Value: &v, Line: v.Line, From: field + " of " + c.path}
	}
	return out
}

// resolveGrid checks the grid's points: their names, which name folders beside the
// comparison's own files, and their settings.
func (c *Config) resolveGrid() error {
	seen := map[string]bool{}
	for i, p := range c.Grid {
		field := fmt.Sprintf("grid[%d].name", i)
		if err := config.CheckName(field, p.Name); err != nil {
			return err
		}
		if p.Name == RunsDir || p.Name == ReportFile || strings.HasPrefix(p.Name, "claims_by_point.") || strings.HasPrefix(p.Name, "scale_") ||
			strings.HasPrefix(p.Name, "claims_by_length.") || strings.HasPrefix(p.Name, "length_") {
			return fmt.Errorf("%s: %q is the name of one of the comparison's own files or folders", field, p.Name)
		}
		if seen[p.Name] {
			return fmt.Errorf("%s: %q is used twice", field, p.Name)
		}
		seen[p.Name] = true
		sets, err := setList(p.Set)
		if err != nil {
			return fmt.Errorf("grid[%d].set: %w", i, err)
		}
		for _, kv := range sets {
			if key, _, _ := strings.Cut(kv, "="); key == "seed" || key == "name" {
				return fmt.Errorf("grid[%d].set: %s is the comparison's to set", i, key)
			}
		}
	}
	return nil
}

// AtPoint is the comparison at grid point i alone: the same runs with the point's settings,
// named comparison/point, without a grid.
func (c *Config) AtPoint(i int) (*Config, error) {
	if _, err := setList(c.Grid[i].Set); err != nil {
		return nil, fmt.Errorf("grid[%d].set: %w", i, err)
	}
	p := *c
	p.Name = c.Name + "/" + c.Grid[i].Name
	p.Grid = nil
	p.globalSets = append(slices.Clone(c.globalSets), c.overrides(fmt.Sprintf("grid[%d].set", i), c.Grid[i].Set)...)
	return &p, nil
}

// Plan is a comparison resolved: every (run, seed) in a fixed order, each run's config read and
// resolved once, shared by the runner, its shards and its report. It is not changed after
// Resolve.
type Plan struct {
	Comparison *Config
	// runs have their folders relative to their grid point's: runs/<name>.
	runs []Planned
	// part says the plan is a part of its comparison's (Only): it writes no folder that holds
	// runs it leaves out (Runner.checkPart).
	part bool
}

// Resolve plans every (run, seed) of the comparison, in a fixed order: with a grid, point by
// point. Every run of a point must train at the same length on the same data and be scored on
// the same tokens; points may differ in training length (samePointProtocol).
func (c *Config) Resolve() (*Plan, error) {
	if len(c.Grid) == 0 {
		runs, err := c.planRuns()
		if err != nil {
			return nil, err
		}
		return &Plan{Comparison: c, runs: runs}, nil
	}
	var out []Planned
	for i, p := range c.Grid {
		at, err := c.AtPoint(i)
		if err != nil {
			return nil, err
		}
		plan, err := at.planRuns()
		if err != nil {
			return nil, fmt.Errorf("grid[%d] (%s): %w", i, p.Name, err)
		}
		if len(out) > 0 {
			if err := samePointProtocol(out[0].Config(), plan[0].Config()); err != nil {
				return nil, fmt.Errorf("grid[%d] (%s): %w", i, p.Name, err)
			}
		}
		for k := range plan {
			plan[k].Point = p.Name
		}
		out = append(out, plan...)
	}
	return &Plan{Comparison: c, runs: out}, nil
}

// Runs are the planned runs with their folders under dir, the comparison's folder: with a grid,
// each point's in dir/point.
func (p *Plan) Runs(dir string) []Planned {
	out := slices.Clone(p.runs)
	for i := range out {
		out[i].Dir = filepath.Join(dir, out[i].Point, out[i].Dir)
	}
	return out
}

// atPoint is the plan of grid point i alone, as the comparison at that point (AtPoint) plans it.
func (p *Plan) atPoint(i int) (*Plan, error) {
	at, err := p.Comparison.AtPoint(i)
	if err != nil {
		return nil, err
	}
	var runs []Planned
	for _, r := range p.runs {
		if r.Point == p.Comparison.Grid[i].Name {
			r.Point = ""
			runs = append(runs, r)
		}
	}
	return &Plan{Comparison: at, runs: runs}, nil
}

// planRuns plans the runs of a comparison without a grid, with their folders relative to the
// comparison's.
func (c *Config) planRuns() ([]Planned, error) {
	var out []Planned
	var first *config.Config
	labels := map[string]bool{}
	for i, spec := range c.Runs {
		if _, err := setList(spec.Set); err != nil {
			return nil, fmt.Errorf("runs[%d].set: %w", i, err)
		}
		// The comparison's set, then the run's own, then the command line's.
		all := slices.Concat(c.globalSets, c.overrides(fmt.Sprintf("runs[%d].set", i), spec.Set), config.Sets(c.cliSets))
		if spec.Checkpoints != nil {
			planned, err := c.planCheckpoints(i, spec, all, labels, first)
			if err != nil {
				return nil, err
			}
			if first == nil {
				cfg := planned[0].Config()
				first = &cfg
			}
			out = append(out, planned...)
			continue
		}
		if spec.Config == "" {
			return nil, fmt.Errorf("runs[%d].config: missing (or checkpoints, for models trained elsewhere)", i)
		}
		path := spec.Config
		if config.IsBareName(path) {
			path = filepath.Join(c.dir, strings.TrimSuffix(path, ".yaml")+".yaml")
		}
		resolved, err := config.LoadOverridden(path, all)
		if err != nil {
			return nil, fmt.Errorf("runs[%d]: %w", i, err)
		}
		base := resolved.Config()
		label := spec.Label
		if label == "" {
			label = base.Name
		}
		if err := takeLabel(i, label, labels); err != nil {
			return nil, err
		}
		if first == nil {
			first = &base
		} else if err := sameProtocol(*first, base); err != nil {
			return nil, fmt.Errorf("runs[%d] (%s): %w", i, label, err)
		}
		for _, seed := range c.Seeds {
			name := fmt.Sprintf("%s-s%d", label, seed)
			// The run's folder: a label within bounds may still make too long a name with its seed.
			if err := config.CheckName(fmt.Sprintf("runs[%d].label", i), name); err != nil {
				return nil, err
			}
			rc := resolved.WithSeed(name, seed)
			out = append(out, Planned{Label: label, Seed: seed, Resolved: rc, Dir: filepath.Join(RunsDir, name)})
		}
	}
	return out, nil
}

// takeLabel checks the i-th entry's label, a name no entry before it took (labels), and takes
// it.
func takeLabel(i int, label string, labels map[string]bool) error {
	if err := config.CheckName(fmt.Sprintf("runs[%d].label", i), label); err != nil {
		return err
	}
	if labels[label] {
		return fmt.Errorf("runs[%d].label: %q is used twice; give one a label", i, label)
	}
	labels[label] = true
	return nil
}

// sameProtocol checks that two runs train at the same length on the same data and are scored on
// the same validation tokens at the same lengths. Runs trained on tasks may train at different
// lengths, each at the window its task needs: they are compared by the tasks' sizes, which do
// not depend on it.
func sameProtocol(a, b config.Config) error {
	tasks := a.Task != nil && b.Task != nil
	switch {
	case a.Train.SeqLen != b.Train.SeqLen && !tasks:
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

// samePointProtocol checks that two grid points score the same validation tokens of the same
// data in the same protocol, at the same multiples of their training lengths. Points may train
// at different lengths, each with its own batch and evaluation lengths: the claims judge each
// point at multiples of its own training length, so a training-length axis compares like with
// like.
func samePointProtocol(a, b config.Config) error {
	if a.Train.SeqLen != b.Train.SeqLen {
		ma, mb := multiples(a), multiples(b)
		if !slices.Equal(ma, mb) {
			return fmt.Errorf("train.seq_len %d scores eval.lengths %v at %s its training length, not at the first point's %s",
				b.Train.SeqLen, b.Eval.Lengths, strings.Join(mb, ", "), strings.Join(ma, ", "))
		}
		b.Train.SeqLen, b.Eval.Lengths = a.Train.SeqLen, a.Eval.Lengths
	}
	return sameProtocol(a, b)
}

// multiples are a config's evaluation lengths as multiples of its training length: "1x", "2x".
func multiples(c config.Config) []string {
	out := make([]string, len(c.Eval.Lengths))
	for i, n := range c.Eval.Lengths {
		out[i] = measure.Ratio(n, c.Train.SeqLen)
	}
	return out
}
