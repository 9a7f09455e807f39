package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"extrapolate/experiments/config"
	"extrapolate/experiments/export"
	"extrapolate/experiments/training"
	"extrapolate/internal/cmdtest"
	"extrapolate/internal/exporttest"
	"extrapolate/internal/safetensors"
	"extrapolate/position"
)

var binary string

func TestMain(m *testing.M) { cmdtest.Main(m, "export", &binary) }

// loader is the PyTorch loader.
var loader = exporttest.Script("load.py")

// variant is one model the loader must rebuild: a scheme, a scaling or a temperature.
type variant struct {
	name string
	set  func(c *config.Config)
	// scalings are evaluated by cmd/eval's computation and named to the loader by -scaling;
	// nil scores the config's own: none, and its scaling if it has one, as the loader does
	// by default.
	scalings []string
}

func scheme(name string, params map[string]any) func(c *config.Config) {
	return func(c *config.Config) { c.Position = position.Config{Scheme: name, Params: params} }
}

func temperature(scale string) func(c *config.Config) {
	return func(c *config.Config) { c.Position.Scheme, c.Attention.Scale = "nope", scale }
}

// variants are every scheme (Hard-ALiBi on 4 heads, 2 of them windowed), every scaling, p-RoPE and partial rotation, a mix, every
// attention temperature, softpick, both attention gates and the sinks, with the config's own
// scaling (and its fields), sliding evaluation windows (eval.stride), and sliding attention
// windows (position.window: on one layer of a mix with sinks, as gpt-oss bands its layers, or
// with softpick, and on stick-breaking) each in one of them.
var variants = []variant{
	{name: "nope", set: scheme("nope", nil)},
	{name: "learned", set: scheme("learned", nil)}, // not applicable past 16, for both
	{name: "sinusoidal", set: scheme("sinusoidal", nil)},
	{name: "rope_every_scaling", set: scheme("rope", nil), scalings: append([]string{"none"}, position.ScalingTypes()...)},
	{name: "rope_interleaved", set: scheme("rope", map[string]any{"pairing": "interleaved"})},
	{name: "rope_frequency_fraction", set: scheme("rope", map[string]any{"frequency_fraction": 0.5}), scalings: []string{"none", "yarn"}},
	{name: "rope_rotary_fraction", set: scheme("rope", map[string]any{"rotary_fraction": 0.5, "base": 500}), scalings: []string{"none", "ntk"}},
	{name: "rope_config_yarn", set: func(c *config.Config) {
		c.Position = position.Config{Scheme: "rope", Scaling: &position.Scaling{Type: "yarn", Factor: position.Factor{Auto: true}, Params: map[string]any{"beta_fast": 16.0}}}
	}},
	{name: "xpos_config_ntk2", set: func(c *config.Config) {
		c.Position = position.Config{Scheme: "xpos", Params: map[string]any{"scale_base": 64}, Scaling: &position.Scaling{Type: "ntk", Factor: position.Factor{Value: 2}}}
	}},
	{name: "alibi_sliding", set: func(c *config.Config) {
		c.Position, c.Model.Heads = position.Config{Scheme: "alibi"}, 4 // heads 4: slopes 2^-2, 2^-4, ...
		stride := 8
		c.Eval.Stride = &stride
	}},
	{name: "t5", set: scheme("t5", map[string]any{"buckets": 8, "max_distance": 12})},
	{name: "hard_alibi", set: func(c *config.Config) { c.Position, c.Model.Heads = position.Config{Scheme: "hard_alibi"}, 4 }},
	{name: "kerple", set: scheme("kerple", nil)},
	{name: "fire", set: scheme("fire", map[string]any{"hidden": 8, "threshold_init": 8})},
	{name: "fox", set: scheme("fox", nil)},
	{name: "stickbreaking", set: scheme("stickbreaking", nil)},
	{name: "stickbreaking_current", set: scheme("stickbreaking", map[string]any{"attend_current": true})},
	{name: "cope", set: scheme("cope", nil)},
	{name: "mix_yarn", set: func(c *config.Config) {
		c.Position = position.Config{Scheme: "mix", Params: map[string]any{"layers": []any{"rope", "kerple"}},
			Scaling: &position.Scaling{Type: "yarn", Factor: position.Factor{Auto: true}}}
	}},
	{name: "mix_t5_fire", set: scheme("mix", map[string]any{"layers": []any{"t5", map[string]any{"scheme": "fire", "hidden": 4}}})},
	{name: "mix_rope_fox", set: scheme("mix", map[string]any{"layers": []any{"rope", "fox"}})},
	{name: "mix_rope_stickbreaking", set: scheme("mix", map[string]any{"layers": []any{"rope", "stickbreaking"}})},
	{name: "mix_rope_cope", set: scheme("mix", map[string]any{"layers": []any{"rope", map[string]any{"scheme": "cope", "npos": 5}}})},
	{name: "rope_logn", set: func(c *config.Config) { c.Attention.Scale = "logn" }},
	{name: "nope_logn_train", set: temperature("logn_train")},
	{name: "nope_ssmax", set: temperature("ssmax")},
	{name: "rope_softpick", set: func(c *config.Config) { c.Attention.Normaliser = "softpick" }},
	{name: "rope_gate", set: func(c *config.Config) { c.Attention.Gate = "elementwise" }},
	{name: "t5_sinks_gate", set: func(c *config.Config) {
		c.Position, c.Attention.Sinks, c.Attention.Gate = position.Config{Scheme: "t5"}, true, "headwise"
	}},
	{name: "fox_gate_headwise", set: func(c *config.Config) { c.Position.Scheme, c.Attention.Gate = "fox", "headwise" }},
	{name: "t5_ssmax_softpick", set: func(c *config.Config) {
		c.Position, c.Attention.Scale, c.Attention.Normaliser = position.Config{Scheme: "t5"}, "ssmax", "softpick"
	}},
	{name: "mix_window_sinks", set: func(c *config.Config) {
		c.Position = position.Config{Scheme: "mix", Params: map[string]any{"layers": []any{map[string]any{"scheme": "rope", "window": 4}, "rope"}}}
		c.Attention.Sinks = true
	}},
	{name: "stickbreaking_window", set: func(c *config.Config) { c.Position = position.Config{Scheme: "stickbreaking", Window: 4} }},
	{name: "mix_window_softpick", set: func(c *config.Config) {
		c.Position = position.Config{Scheme: "mix", Params: map[string]any{"layers": []any{map[string]any{"scheme": "rope", "window": 4}, "rope"}}}
		c.Attention.Normaliser = "softpick"
	}},
}

// TestLoaderReproducesEval trains a tiny model of each variant, scores it with cmd/eval's
// computation, exports it, and checks that the PyTorch loader, rebuilding the model from the
// export alone, gives the same perplexity at every length and scaling. The loader scores every
// export that takes the same -scaling in one run, so that PyTorch starts four times, not 25.
func TestLoaderReproducesEval(t *testing.T) {
	exporttest.NeedTorch(t)
	start := time.Now()
	want, dirs := map[string]exporttest.Scored{}, map[string]string{}
	groups := map[string][]string{} // variants by the -scaling the loader is given
	for _, v := range variants {
		ckpt := exporttest.TrainTiny(t, v.set)
		want[v.name] = exporttest.EvalScores(t, ckpt, scalings(v.scalings))
		dirs[v.name] = filepath.Join(t.TempDir(), "export")
		if code, _, stderr := cmdtest.Run(t, binary, "", "-checkpoint", ckpt, "-out", dirs[v.name]); code != 0 {
			t.Fatalf("%s: export: exit %d: %s", v.name, code, stderr)
		}
		arg := strings.Join(v.scalings, ",")
		groups[arg] = append(groups[arg], v.name)
	}
	got := map[string]exporttest.Scored{}
	for arg, names := range groups {
		var folders, flags []string
		for _, n := range names {
			folders = append(folders, dirs[n])
		}
		if arg != "" {
			flags = []string{"--scaling", arg}
		}
		for i, s := range exporttest.LoaderScores(t, folders, flags...) {
			got[names[i]] = s
		}
	}
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			t.Logf("worst relative difference in loss %.2g", exporttest.Compare(t, want[v.name], got[v.name]))
		})
	}
	t.Logf("%d variants in %s", len(variants), time.Since(start).Round(time.Second))
}

// scalings are the scalings named, each at factor auto; nil for none named, the config's own.
func scalings(names []string) []*position.Scaling {
	var out []*position.Scaling
	for _, n := range names {
		var sc *position.Scaling
		if n != "none" {
			sc = &position.Scaling{Type: n, Factor: position.Factor{Auto: true}}
		}
		out = append(out, sc)
	}
	return out
}

// tinyConfig writes the config of a tiny model into a file, and returns its path.
func tinyConfig(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "tiny.yaml")
	text := "name: tiny\ndata: {corpus: text, path: " + cmdtest.TextCorpus(t) + "}\nmodel: {d_model: 16, layers: 2, heads: 2}\n" +
		"position: {scheme: t5}\ntrain: {seq_len: 16, batch_size: 8, steps: 150}\neval: {lengths: [16, 32], tokens: 256}\n"
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestExportUntrained exports a config's untrained model (-config, with -set): its weights
// are the ones train draws before its first step, and config.json says it was saved at step 0
// of the steps -set gave, which pytorch/train.py reads as a model to train from scratch.
func TestExportUntrained(t *testing.T) {
	path := tinyConfig(t)
	dir := filepath.Join(t.TempDir(), "untrained")
	code, stdout, stderr := cmdtest.Run(t, binary, "", "-config", path, "-set", "train.steps=7", "-out", dir)
	if code != 0 || !strings.HasPrefix(stdout, "exported the untrained model of tiny (t5 scheme") {
		t.Fatalf("exit %d: %s %s", code, stdout, stderr)
	}
	r, err := config.LoadResolved(path, []string{"train.steps=7"})
	if err != nil {
		t.Fatal(err)
	}
	u, err := training.Untrained(r)
	if err != nil {
		t.Fatal(err)
	}
	want, err := export.New(u)
	if err != nil {
		t.Fatal(err)
	}
	for name, w := range map[string][]byte{export.WeightsFile: want.Weights, export.ConfigFile: want.Config} {
		if got, err := os.ReadFile(filepath.Join(dir, name)); err != nil || !bytes.Equal(got, w) {
			t.Errorf("%s differs from the export of the untrained model (%v)", name, err)
		}
	}
	var c struct {
		Partial string         `json:"partial"`
		Train   map[string]any `json:"train"`
	}
	if err := json.Unmarshal(want.Config, &c); err != nil || c.Partial != "train step 0 of 7" || c.Train["steps"] != 7.0 || c.Train["warmup"] != 0.0 {
		t.Errorf("config.json: partial %q, train %v (%v); want step 0 of 7, 7 steps, warmup 0 (min(100, 7/10))", c.Partial, c.Train, err)
	}
}

// TestExportFiles checks the two files: the weights are the checkpoint's, under their names,
// in a valid safetensors file, and config.json names them with their shapes and the file's
// SHA-256, and states the scheme as resolved.
func TestExportFiles(t *testing.T) {
	ckpt := exporttest.TrainTiny(t, scheme("t5", nil))
	dir := filepath.Join(t.TempDir(), "export")
	code, stdout, stderr := cmdtest.Run(t, binary, "", "-checkpoint", ckpt, "-out", dir)
	if code != 0 || !strings.Contains(stdout, "exported") {
		t.Fatalf("exit %d: %s %s", code, stdout, stderr)
	}
	b, err := os.ReadFile(filepath.Join(dir, export.WeightsFile))
	if err != nil {
		t.Fatal(err)
	}
	ts, meta, err := safetensors.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := training.LoadCheckpoint(ckpt)
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
			Name    string   `json:"name"`
			Shape   []int    `json:"shape"`
			Decay   bool     `json:"decay"`
			LRScale float64  `json:"lr_scale"`
			Floor   *float64 `json:"floor"`
		} `json:"weights"`
		Train map[string]any `json:"train"`
		SHA   string         `json:"weights_sha256"`
	}
	cb, err := os.ReadFile(filepath.Join(dir, export.ConfigFile))
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
	// How the optimizer treats each weight, as model.Param says: T5's table at its lr_scale
	// without decay, the matrices with it, the vectors without, no floor.
	for i, p := range tr.Model.Params {
		w, scale := c.Weights[i], p.LRScale
		if scale == 0 {
			scale = 1
		}
		if w.Decay != p.Decay || w.LRScale != scale || w.Floor != nil {
			t.Errorf("weight %s: decay %v, lr_scale %v, floor %v; want %v, %v, none", w.Name, w.Decay, w.LRScale, w.Floor, p.Decay, scale)
		}
	}
	if w := c.Weights[1]; w.Decay || w.LRScale != st["lr_scale"] || !c.Weights[0].Decay {
		t.Errorf("t5.bias: decay %v, lr_scale %v (settings' %v); wte: decay %v", w.Decay, w.LRScale, st["lr_scale"], c.Weights[0].Decay)
	}
	if c.Train["seq_len"] != 16.0 || c.Train["batch_size"] != 8.0 || c.Train["min_lr"] != 1e-3 {
		t.Errorf("train section %v, want the config's: seq_len 16, batch_size 8, min_lr lr/10", c.Train)
	}
}

// TestExportBadInput checks that every bad input is refused with exit status 2 and one line
// naming the flag or file, writing nothing, and that an export is replaced only with
// -overwrite.
func TestExportBadInput(t *testing.T) {
	ckpt := exporttest.TrainTiny(t, scheme("nope", nil))
	dir := t.TempDir()
	truncated := filepath.Join(dir, "truncated.ckpt")
	good, _ := os.ReadFile(ckpt)
	os.WriteFile(truncated, good[:len(good)/2], 0o644)
	file := filepath.Join(dir, "file")
	os.WriteFile(file, nil, 0o644)
	config := tinyConfig(t)
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
		{[]string{"-checkpoint", ckpt, "-config", config}, "-checkpoint and -config: give one"},
		{[]string{"-checkpoint", ckpt, "-set", "train.steps=3"}, "-set: only with -config"},
		{[]string{"-config", config, "-out", ""}, "-out: missing"},
		{[]string{"-config", filepath.Join(dir, "none.yaml")}, "none.yaml"},
		{[]string{"-config", config, "-set", "model.d_model=abc"}, "model.d_model"},
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
	before, _ := os.ReadFile(filepath.Join(out, export.ConfigFile))
	code, _, stderr := cmdtest.Run(t, binary, "", "-checkpoint", ckpt, "-out", out)
	if code != 2 || !strings.Contains(stderr, "exists; use -overwrite") {
		t.Errorf("a second export: exit %d, %q; want 2 and -overwrite named", code, stderr)
	}
	if code, _, stderr := cmdtest.Run(t, binary, "", "-checkpoint", ckpt, "-out", out, "-overwrite"); code != 0 {
		t.Errorf("-overwrite: exit %d: %s", code, stderr)
	}
	after, _ := os.ReadFile(filepath.Join(out, export.ConfigFile))
	if !bytes.Equal(before, after) {
		t.Errorf("exporting the same checkpoint again gave another config.json")
	}
}
