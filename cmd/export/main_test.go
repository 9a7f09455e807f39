package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"extrapolate/data"
	"extrapolate/experiments"
	"extrapolate/internal/cmdtest"
	"extrapolate/internal/safetensors"
	"extrapolate/position"
)

var binary string

func TestMain(m *testing.M) { cmdtest.Main(m, "export", &binary) }

// python is the interpreter the loader runs with: Debian's, where python3-torch installs torch.
const python = "/usr/bin/python3"

// loader is the PyTorch loader, from this package's folder.
var loader = filepath.Join("..", "..", "pytorch", "load.py")

// variant is one model the loader must rebuild: a scheme, a scaling or a temperature.
type variant struct {
	name string
	set  func(c *experiments.Config)
	// scalings are evaluated by cmd/eval's computation and named to the loader by -scaling;
	// nil scores the config's own: none, and its scaling if it has one, as the loader does
	// by default.
	scalings []string
}

func scheme(name string, params map[string]any) func(c *experiments.Config) {
	return func(c *experiments.Config) { c.Position = position.Config{Scheme: name, Params: params} }
}

func temperature(scale string) func(c *experiments.Config) {
	return func(c *experiments.Config) { c.Position.Scheme, c.Attention.Scale = "nope", scale }
}

// variants are every scheme (Hard-ALiBi on 4 heads, 2 of them windowed), every scaling, p-RoPE and partial rotation, a mix, every
// attention temperature, softpick, both attention gates and the sinks, with the config's own
// scaling (and its fields), sliding evaluation windows (eval.stride), and sliding attention
// windows (position.window: on one layer of a mix with sinks, as gpt-oss bands its layers, and
// on stick-breaking) each in one of them.
var variants = []variant{
	{name: "nope", set: scheme("nope", nil)},
	{name: "learned", set: scheme("learned", nil)}, // not applicable past 16, for both
	{name: "sinusoidal", set: scheme("sinusoidal", nil)},
	{name: "rope_every_scaling", set: scheme("rope", nil), scalings: append([]string{"none"}, position.ScalingTypes()...)},
	{name: "rope_interleaved", set: scheme("rope", map[string]any{"pairing": "interleaved"})},
	{name: "rope_frequency_fraction", set: scheme("rope", map[string]any{"frequency_fraction": 0.5}), scalings: []string{"none", "yarn"}},
	{name: "rope_rotary_fraction", set: scheme("rope", map[string]any{"rotary_fraction": 0.5, "base": 500}), scalings: []string{"none", "ntk"}},
	{name: "rope_config_yarn", set: func(c *experiments.Config) {
		c.Position = position.Config{Scheme: "rope", Scaling: &position.Scaling{Type: "yarn", Factor: position.Factor{Auto: true}, Params: map[string]any{"beta_fast": 16.0}}}
	}},
	{name: "xpos_config_ntk2", set: func(c *experiments.Config) {
		c.Position = position.Config{Scheme: "xpos", Params: map[string]any{"scale_base": 64}, Scaling: &position.Scaling{Type: "ntk", Factor: position.Factor{Value: 2}}}
	}},
	{name: "alibi_sliding", set: func(c *experiments.Config) {
		c.Position, c.Model.Heads = position.Config{Scheme: "alibi"}, 4 // heads 4: slopes 2^-2, 2^-4, ...
		stride := 8
		c.Eval.Stride = &stride
	}},
	{name: "t5", set: scheme("t5", map[string]any{"buckets": 8, "max_distance": 12})},
	{name: "hard_alibi", set: func(c *experiments.Config) { c.Position, c.Model.Heads = position.Config{Scheme: "hard_alibi"}, 4 }},
	{name: "kerple", set: scheme("kerple", nil)},
	{name: "fire", set: scheme("fire", map[string]any{"hidden": 8, "threshold_init": 8})},
	{name: "fox", set: scheme("fox", nil)},
	{name: "stickbreaking", set: scheme("stickbreaking", nil)},
	{name: "stickbreaking_current", set: scheme("stickbreaking", map[string]any{"attend_current": true})},
	{name: "cope", set: scheme("cope", nil)},
	{name: "mix_yarn", set: func(c *experiments.Config) {
		c.Position = position.Config{Scheme: "mix", Params: map[string]any{"layers": []any{"rope", "kerple"}},
			Scaling: &position.Scaling{Type: "yarn", Factor: position.Factor{Auto: true}}}
	}},
	{name: "mix_t5_fire", set: scheme("mix", map[string]any{"layers": []any{"t5", map[string]any{"scheme": "fire", "hidden": 4}}})},
	{name: "mix_rope_fox", set: scheme("mix", map[string]any{"layers": []any{"rope", "fox"}})},
	{name: "mix_rope_stickbreaking", set: scheme("mix", map[string]any{"layers": []any{"rope", "stickbreaking"}})},
	{name: "mix_rope_cope", set: scheme("mix", map[string]any{"layers": []any{"rope", map[string]any{"scheme": "cope", "npos": 5}}})},
	{name: "rope_logn", set: func(c *experiments.Config) { c.Attention.Scale = "logn" }},
	{name: "nope_logn_train", set: temperature("logn_train")},
	{name: "nope_ssmax", set: temperature("ssmax")},
	{name: "rope_softpick", set: func(c *experiments.Config) { c.Attention.Normaliser = "softpick" }},
	{name: "rope_gate", set: func(c *experiments.Config) { c.Attention.Gate = "elementwise" }},
	{name: "t5_sinks_gate", set: func(c *experiments.Config) {
		c.Position, c.Attention.Sinks, c.Attention.Gate = position.Config{Scheme: "t5"}, true, "headwise"
	}},
	{name: "fox_gate_headwise", set: func(c *experiments.Config) { c.Position.Scheme, c.Attention.Gate = "fox", "headwise" }},
	{name: "t5_ssmax_softpick", set: func(c *experiments.Config) {
		c.Position, c.Attention.Scale, c.Attention.Normaliser = position.Config{Scheme: "t5"}, "ssmax", "softpick"
	}},
	{name: "mix_window_sinks", set: func(c *experiments.Config) {
		c.Position = position.Config{Scheme: "mix", Params: map[string]any{"layers": []any{map[string]any{"scheme": "rope", "window": 4}, "rope"}}}
		c.Attention.Sinks = true
	}},
	{name: "stickbreaking_window", set: func(c *experiments.Config) { c.Position = position.Config{Scheme: "stickbreaking", Window: 4} }},
}

// tolerance bounds |loss_go − loss_torch| / loss_torch. The Go model computes in float32 (its
// weights, activations and scores; the position tables in float64, then rounded), the loader
// in float64 from the same float32 weights: each logit then differs by float32 rounding,
// 2^-24 ≈ 6e-8 relative, a few ulps after the sums of LayerNorm and softmax and the fast exp
// and tanh, and the mean over 256 tokens averages much of it away: the largest difference seen
// over every variant is 1.5e-7. 2e-6 leaves a margin of 13. A wrong formula moves these
// models' loss by far more: an ALiBi slope 10% off by 1e-2, YaRN without its attention factor
// by 6e-2, p-RoPE's stopped pairs turning slowly instead of not at all by 1.6e-4, log-n with
// log(L+1) for log(L) by 5e-3 (each tried in the loader, each failing this test).
const tolerance = 2e-6

// TestLoaderReproducesEval trains a tiny model of each variant, scores it with cmd/eval's
// computation, exports it, and checks that the PyTorch loader, rebuilding the model from the
// export alone, gives the same perplexity at every length and scaling. The loader scores every
// export that takes the same -scaling in one run, so that PyTorch starts four times, not 25.
func TestLoaderReproducesEval(t *testing.T) {
	if err := exec.Command(python, "-c", "import torch").Run(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI is set and %s cannot import torch (%v): install python3-torch", python, err)
		}
		t.Skipf("%s cannot import torch (%v): apt-get install python3-torch", python, err)
	}
	start := time.Now()
	want, dirs := map[string]scored{}, map[string]string{}
	groups := map[string][]string{} // variants by the -scaling the loader is given
	for _, v := range variants {
		ckpt := trainTiny(t, v.set)
		want[v.name] = evalPerplexities(t, ckpt, v.scalings)
		dirs[v.name] = filepath.Join(t.TempDir(), "export")
		if code, _, stderr := cmdtest.Run(t, binary, "", "-checkpoint", ckpt, "-out", dirs[v.name]); code != 0 {
			t.Fatalf("%s: export: exit %d: %s", v.name, code, stderr)
		}
		arg := strings.Join(v.scalings, ",")
		groups[arg] = append(groups[arg], v.name)
	}
	got := map[string]scored{}
	for arg, names := range groups {
		var folders []string
		for _, n := range names {
			folders = append(folders, dirs[n])
		}
		for i, s := range loaderPerplexities(t, folders, arg) {
			got[names[i]] = s
		}
	}
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) { compare(t, want[v.name], got[v.name]) })
	}
	t.Logf("%d variants in %s", len(variants), time.Since(start).Round(time.Second))
}

// trainTiny trains a tiny model of 2 layers on a generated text and returns its checkpoint: 150
// steps at a learning rate of 0.01, so that its attention is sharp and every position formula
// shows in its loss (after a dozen steps attention is near uniform, and YaRN's attention factor
// moved the loss by less than 1e-6).
func trainTiny(t *testing.T, set func(c *experiments.Config)) string {
	t.Helper()
	dir := t.TempDir()
	c := experiments.Default()
	c.Name = "tiny"
	c.Data = data.Config{Corpus: "text", Path: cmdtest.TextCorpus(t)}
	c.Model.DModel, c.Model.Layers, c.Model.Heads = 16, 2, 2
	c.Train.SeqLen, c.Train.BatchSize, c.Train.Steps, c.Train.LR = 16, 8, 150, 1e-2
	c.Eval = experiments.Eval{Lengths: []int{16, 32, 64}, Tokens: 256, BatchTokens: 128}
	set(&c)
	if err := c.Complete(); err != nil {
		t.Fatal(err)
	}
	rc, err := c.Resolve()
	if err != nil {
		t.Fatal(err)
	}
	r := &experiments.Run{Resolved: rc, Dir: filepath.Join(dir, "run")}
	if _, err := r.Execute(context.Background()); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(r.Dir, experiments.CheckpointFile)
}

// scored is a loss by scaling and length; NaN for a length that is not applicable.
type scored map[string]map[int]float64

// add records the loss at a scaling and length, nil for not applicable.
func (s scored) add(scaling string, n int, loss *float64) {
	if s[scaling] == nil {
		s[scaling] = map[int]float64{}
	}
	s[scaling][n] = math.NaN()
	if loss != nil {
		s[scaling][n] = *loss
	}
}

// evalPerplexities scores the checkpoint under the named scalings (nil: none and the config's
// own) as cmd/eval does.
func evalPerplexities(t *testing.T, ckpt string, names []string) scored {
	t.Helper()
	tr, err := experiments.LoadCheckpoint(ckpt)
	if err != nil {
		t.Fatal(err)
	}
	list := []*position.Scaling{nil}
	if names == nil && tr.Config.Position.Scaling != nil {
		list = append(list, tr.Config.Position.Scaling)
	}
	if names != nil {
		list = nil
		for _, n := range names {
			var sc *position.Scaling
			if n != "none" {
				sc = &position.Scaling{Type: n, Factor: position.Factor{Auto: true}}
			}
			list = append(list, sc)
		}
	}
	rep, err := experiments.EvaluateScalings(context.Background(), tr, list, tr.Config.Eval, nil)
	if err != nil {
		t.Fatal(err)
	}
	out := scored{}
	for _, r := range rep.Results {
		for _, l := range r.Lengths {
			out.add(r.Scaling, l.Length, l.Loss)
		}
	}
	return out
}

// loaderPerplexities runs the loader on exports, with -scaling scalings unless it is empty, and
// reads its JSON: a report per folder, in order.
func loaderPerplexities(t *testing.T, folders []string, scalings string) []scored {
	t.Helper()
	// --block-scores 1000 cuts every variant's queries into blocks of a few rows (batches of
	// 2 to 8 windows on 2 heads, at 16 to 64 positions), so that the blocks' seams are checked.
	args := append([]string{loader, "--json", "--dtype", "float64", "--block-scores", "1000", "--quiet"}, folders...)
	if scalings != "" {
		args = append(args, "--scaling", scalings)
	}
	cmd := exec.Command(python, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("loader: %v: %s", err, stderr.String())
	}
	var reps []struct {
		Results []struct {
			Scaling string `json:"scaling"`
			Lengths []struct {
				Length int      `json:"length"`
				Loss   *float64 `json:"loss"`
			} `json:"lengths"`
		} `json:"results"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &reps); err != nil || len(reps) != len(folders) {
		t.Fatalf("loader output %q for %d folders: %v", stdout.String(), len(folders), err)
	}
	out := make([]scored, len(reps))
	for i, rep := range reps {
		out[i] = scored{}
		for _, r := range rep.Results {
			for _, l := range r.Lengths {
				out[i].add(r.Scaling, l.Length, l.Loss)
			}
		}
	}
	return out
}

// compare checks that the loader scored every scaling and length cmd/eval did, within the
// tolerance, and the same lengths not applicable.
func compare(t *testing.T, want, got scored) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("loader scored scalings %v, cmd/eval %v", keys(got), keys(want))
	}
	worst := 0.0
	for sc, byLen := range want {
		for n, w := range byLen {
			g, ok := got[sc][n]
			switch {
			case !ok:
				t.Errorf("%s at %d: the loader has no result", sc, n)
			case math.IsNaN(w) || math.IsNaN(g):
				if math.IsNaN(w) != math.IsNaN(g) {
					t.Errorf("%s at %d: cmd/eval loss %v, loader %v: one says not applicable", sc, n, w, g)
				}
			default:
				rel := math.Abs(w-g) / math.Abs(g)
				worst = math.Max(worst, rel)
				if rel > tolerance {
					t.Errorf("%s at %d: cmd/eval loss %.7f, loader %.7f (relative %.2g, tolerance %g)", sc, n, w, g, rel, tolerance)
				}
			}
		}
	}
	t.Logf("worst relative difference in loss %.2g", worst)
}

func keys(s scored) []string {
	var out []string
	for k := range s {
		out = append(out, k)
	}
	return out
}

// TestExportFiles checks the two files: the weights are the checkpoint's, under their names,
// in a valid safetensors file, and config.json names them with their shapes and the file's
// SHA-256, and states the scheme as resolved.
func TestExportFiles(t *testing.T) {
	ckpt := trainTiny(t, scheme("t5", nil))
	dir := filepath.Join(t.TempDir(), "export")
	code, stdout, stderr := cmdtest.Run(t, binary, "", "-checkpoint", ckpt, "-out", dir)
	if code != 0 || !strings.Contains(stdout, "exported") {
		t.Fatalf("exit %d: %s %s", code, stdout, stderr)
	}
	b, err := os.ReadFile(filepath.Join(dir, experiments.ExportWeights))
	if err != nil {
		t.Fatal(err)
	}
	ts, meta, err := safetensors.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := experiments.LoadCheckpoint(ckpt)
	if err != nil {
		t.Fatal(err)
	}
	if len(ts) != len(tr.Model.Params) || meta["scheme"] != "t5" {
		t.Fatalf("%d tensors, metadata %v; want %d (no optimizer state) and scheme t5", len(ts), meta, len(tr.Model.Params))
	}
	for i, p := range tr.Model.Params {
		x := ts[i]
		if x.Name != p.Name || x.Dtype != "F32" || fmt.Sprint(x.Shape) != fmt.Sprint([]int(p.Value.Shape())) {
			t.Fatalf("tensor %d: %s %s %v, want %s F32 %v", i, x.Name, x.Dtype, x.Shape, p.Name, p.Value.Shape())
		}
		for j, v := range p.Value.Data().([]float32) {
			if float32(x.Float64s()[j]) != v {
				t.Fatalf("%s[%d]: %v, want %v", p.Name, j, x.Float64s()[j], v)
			}
		}
	}
	var c struct {
		Position struct {
			Scheme   string         `json:"scheme"`
			Settings map[string]any `json:"settings"`
		} `json:"position"`
		Weights []struct {
			Name  string `json:"name"`
			Shape []int  `json:"shape"`
		} `json:"weights"`
		SHA string `json:"weights_sha256"`
	}
	cb, err := os.ReadFile(filepath.Join(dir, experiments.ExportConfig))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(cb, &c); err != nil {
		t.Fatal(err)
	}
	// The defaults filled in: 32 buckets, max_distance capped at the training length 16,
	// scale √(16/2).
	st := c.Position.Settings
	if c.Position.Scheme != "t5" || st["buckets"] != 32.0 || st["max_distance"] != 17.0 || math.Abs(st["scale"].(float64)-math.Sqrt(8)) > 1e-12 {
		t.Errorf("position %+v", c.Position)
	}
	if len(c.Weights) != len(ts) || c.Weights[1].Name != "t5.bias" || fmt.Sprint(c.Weights[1].Shape) != "[32 2]" || len(c.SHA) != 64 {
		t.Errorf("weights %v, sha %q", c.Weights, c.SHA)
	}
}

// TestExportBadInput checks that every bad input is refused with exit status 2 and one line
// naming the flag or file, writing nothing, and that an export is replaced only with
// -overwrite.
func TestExportBadInput(t *testing.T) {
	ckpt := trainTiny(t, scheme("nope", nil))
	dir := t.TempDir()
	truncated := filepath.Join(dir, "truncated.ckpt")
	good, _ := os.ReadFile(ckpt)
	os.WriteFile(truncated, good[:len(good)/2], 0o644)
	file := filepath.Join(dir, "file")
	os.WriteFile(file, nil, 0o644)
	cases := []struct {
		args []string
		want string
	}{
		{nil, "-checkpoint: missing"},
		{[]string{"-checkpoint", ckpt, "extra"}, `unexpected argument "extra"`},
		{[]string{"-checkpoint", ckpt, "-bogus"}, "-bogus"},
		{[]string{"-checkpoint", filepath.Join(dir, "none.ckpt")}, "none.ckpt"},
		{[]string{"-checkpoint", truncated}, "corrupt"},
		{[]string{"-checkpoint", ckpt, "-out", filepath.Join(file, "sub")}, "-out"},
	}
	for _, c := range cases {
		out := filepath.Join(t.TempDir(), "out")
		args := c.args
		if len(args) > 0 && !strings.Contains(strings.Join(args, " "), "-out") {
			args = append(args, "-out", out)
		}
		code, _, stderr := cmdtest.Run(t, binary, "", args...)
		msg := strings.TrimSpace(stderr)
		if code != 2 || !strings.Contains(msg, c.want) || strings.Contains(msg, "\n") || strings.Contains(msg, "panic") {
			t.Errorf("%v: exit %d, stderr %q; want 2 and one line naming %q", c.args, code, msg, c.want)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%v: wrote %s", c.args, out)
		}
	}
	out := filepath.Join(t.TempDir(), "out")
	if code, _, stderr := cmdtest.Run(t, binary, "", "-checkpoint", ckpt, "-out", out); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	before, _ := os.ReadFile(filepath.Join(out, experiments.ExportConfig))
	code, _, stderr := cmdtest.Run(t, binary, "", "-checkpoint", ckpt, "-out", out)
	if code != 2 || !strings.Contains(stderr, "exists; use -overwrite") {
		t.Errorf("a second export: exit %d, %q; want 2 and -overwrite named", code, stderr)
	}
	if code, _, stderr := cmdtest.Run(t, binary, "", "-checkpoint", ckpt, "-out", out, "-overwrite"); code != 0 {
		t.Errorf("-overwrite: exit %d: %s", code, stderr)
	}
	after, _ := os.ReadFile(filepath.Join(out, experiments.ExportConfig))
	if !bytes.Equal(before, after) {
		t.Errorf("exporting the same checkpoint again gave another config.json")
	}
}
