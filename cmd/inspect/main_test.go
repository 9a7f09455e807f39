package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"extrapolate/data"
	"extrapolate/experiments/config"
	"extrapolate/experiments/measure"
	"extrapolate/experiments/training"
	"extrapolate/internal/cmdtest"
	"extrapolate/internal/sysmem"
	"extrapolate/position"
)

var binary string

func TestMain(m *testing.M) { cmdtest.Main(m, "inspect", &binary) }

func inspect(t *testing.T, dir string, args ...string) (int, string, string) {
	t.Helper()
	return cmdtest.Run(t, binary, dir, args...)
}

// TestYaRNJSON checks the example against the golden numbers of
// position/testdata/golden.py.
func TestYaRNJSON(t *testing.T) {
	code, out, stderr := inspect(t, t.TempDir(), "-scheme", "rope", "-scaling", "yarn", "-dim", "16", "-base", "10000", "-train-len", "128", "-eval-len", "512", "-factor", "4", "-json")
	if code != 0 {
		t.Fatal(stderr)
	}
	var r shown
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	want := []float64{1, 0.237170824513, 0.05, 0.00790569415042, 0.0025, 0.000790569415042, 0.00025, 7.90569415042e-05}
	if len(r.InvFreq) != 8 {
		t.Fatalf("%d frequencies", len(r.InvFreq))
	}
	for i, w := range want {
		if math.Abs(r.InvFreq[i]-w) > 1e-6*w {
			t.Fatalf("inv_freq[%d] = %g, want %g", i, r.InvFreq[i], w)
		}
	}
	if math.Abs(r.AttentionFactor-1.13862943611) > 1e-9 {
		t.Fatalf("attention_factor %g", r.AttentionFactor)
	}
}

func TestALiBiAndSinusoidalJSON(t *testing.T) {
	_, out, _ := inspect(t, t.TempDir(), "-scheme", "alibi", "-heads", "6", "-json")
	var r shown
	json.Unmarshal([]byte(out), &r)
	want := []float64{0.25, 0.0625, 0.015625, 0.00390625, 0.5, 0.125}
	for i, w := range want {
		if len(r.Slopes) != 6 || r.Slopes[i] != w {
			t.Fatalf("slopes %v, want %v", r.Slopes, want)
		}
	}
	_, out, _ = inspect(t, t.TempDir(), "-scheme", "sinusoidal", "-dim", "6", "-heads", "1", "-eval-len", "3", "-json")
	r = shown{}
	json.Unmarshal([]byte(out), &r)
	if len(r.Table) != 3 || len(r.Table[0]) != 6 || math.Abs(r.Table[1][2]-0.0463992234647) > 1e-9 {
		t.Fatalf("table %v", r.Table)
	}
}

// TestPictures draws every kind of picture, each into the file named after its inputs, and
// checks that an existing picture is kept without -overwrite.
func TestPictures(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		name string
	}{
		{[]string{"-scheme", "rope", "-scaling", "yarn", "-dim", "16", "-factor", "4"}, "inspect_rope_yarn_L64_n512_factor4.png"},
		{[]string{"-scheme", "rope"}, "inspect_rope_L64_n512.png"},
		{[]string{"-scheme", "alibi", "-heads", "4", "-eval-len", "16"}, "inspect_alibi_L64_n16.png"},
		{[]string{"-scheme", "sinusoidal", "-dim", "32", "-eval-len", "64"}, "inspect_sinusoidal_L64_n64_dim32.png"},
		{[]string{"-scheme", "learned", "-dim", "8", "-train-len", "32", "-eval-len", "32"}, "inspect_learned_L32_n32_dim8.png"},
		{[]string{"-scheme", "t5", "-heads", "4", "-eval-len", "200"}, "inspect_t5_L64_n200.png"},
		{[]string{"-scheme", "kerple", "-heads", "4", "-layers", "2"}, "inspect_kerple_L64_n512.png"},
		{[]string{"-scheme", "fire", "-heads", "2", "-layers", "2", "-eval-len", "64"}, "inspect_fire_L64_n64_heads2.png"},
		{[]string{"-scheme", "xpos", "-dim", "16", "-scaling", "llama3", "-factor", "4", "-low-freq-factor", "2"}, "inspect_xpos_llama3_L64_n512_factor4_low-freq-factor2.png"},
		{[]string{"-scheme", "mix", "-param", "layers=[rope, {scheme: rope, rotary_fraction: 0.5}, alibi, nope]", "-layers", "4", "-heads", "2", "-dim", "8"}, "inspect_mix_L64_n512_dim8_heads2_layers4_param-layers-646d0c90.png"},
	} {
		code, out, stderr := inspect(t, dir, c.args...)
		if code != 0 || strings.TrimSpace(out) != "wrote "+c.name {
			t.Fatalf("%v: exit %d, stdout %q, stderr %s; want it to write %s", c.args, code, out, stderr, c.name)
		}
		b, err := os.ReadFile(filepath.Join(dir, c.name))
		if err != nil || !bytes.HasPrefix(b, []byte("\x89PNG")) {
			t.Fatalf("%v: no PNG: %v", c.args, err)
		}
		checkIgnored(t, c.name)
	}
	// Without -overwrite the picture of a last run is kept, and the command says so in one line.
	const alibi = "inspect_alibi_L64_n512_heads8.png"
	if code, _, stderr := inspect(t, dir, "-scheme", "alibi", "-heads", "8"); code != 0 {
		t.Fatalf("alibi: exit %d: %s", code, stderr)
	}
	before, _ := os.ReadFile(filepath.Join(dir, alibi))
	code, _, stderr := inspect(t, dir, "-scheme", "alibi", "-heads", "8")
	after, _ := os.ReadFile(filepath.Join(dir, alibi))
	if msg := strings.TrimSpace(stderr); code != 2 || !strings.Contains(msg, "-out "+alibi+": the file exists; give -overwrite") || !bytes.Equal(before, after) {
		t.Errorf("inspect over an existing picture: exit %d, stderr %q, replaced %v; want 2, one line, the file kept", code, msg, !bytes.Equal(before, after))
	}
	if code, _, stderr := inspect(t, dir, "-scheme", "alibi", "-heads", "8", "-overwrite"); code != 0 {
		t.Errorf("-overwrite: exit %d: %s", code, stderr)
	}
}

// TestDefaultsAreTheConfigs checks that a scheme is shown by default at the size the configs
// train it, read from configs/rope.yaml by the config loader (head dimension d_model / heads,
// heads, layers, and train.seq_len as the training length), and that -h says so.
func TestDefaultsAreTheConfigs(t *testing.T) {
	r, err := config.LoadResolved(filepath.Join("..", "..", "configs", "rope.yaml"), nil)
	if err != nil {
		t.Fatal(err)
	}
	c := r.Config()
	code, out, stderr := inspect(t, t.TempDir(), "-scheme", "rope", "-json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var got struct {
		Dim      int `json:"dim"`
		Heads    int `json:"heads"`
		Layers   int `json:"layers"`
		TrainLen int `json:"train_len"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	want := map[string][2]int{
		"dim":       {got.Dim, c.Model.DModel / c.Model.Heads},
		"heads":     {got.Heads, c.Model.Heads},
		"layers":    {got.Layers, c.Model.Layers},
		"train-len": {got.TrainLen, c.Train.SeqLen},
	}
	_, stdout, stderr := inspect(t, "", "-h")
	help := stdout + stderr
	for f, v := range want {
		if v[0] != v[1] {
			t.Errorf("-%s: %d by default, want configs/rope.yaml's %d", f, v[0], v[1])
		}
		if !regexp.MustCompile(`(?m)^  -` + f + ` int\n\s+.*\(default: the configs' ` + strconv.Itoa(v[1]) + `[,)]`).MatchString(help) {
			t.Errorf("-h does not say -%s's default is the configs' %d:\n%s", f, v[1], help)
		}
	}
}

// TestOutputNamedAfterInputs checks that inspections that differ in any input write pictures
// of different names into one folder, each named after its inputs, a checkpoint's after its
// run; that the same inspection again is refused; and that .gitignore covers every name.
func TestOutputNamedAfterInputs(t *testing.T) {
	dir := t.TempDir()
	// The committed checkpoint, as a run's model.ckpt in a run folder, and as a file of its own.
	run := filepath.Join(dir, "runs", "rope_s2")
	if err := os.MkdirAll(run, 0o755); err != nil {
		t.Fatal(err)
	}
	ckpt, err := os.ReadFile(filepath.Join("..", "..", "examples", "checkpoints", "rope_ntk.ckpt"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(run, measure.CheckpointFile), ckpt, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "rope_ntk.ckpt"), ckpt, 0o644); err != nil {
		t.Fatal(err)
	}
	names := map[string][]string{}
	for _, c := range []struct {
		args []string
		name string
	}{
		{[]string{"-scheme", "rope", "-eval-len", "64"}, "inspect_rope_L64_n64.png"},
		{[]string{"-scheme", "rope", "-eval-len", "128"}, "inspect_rope_L64_n128.png"},
		{[]string{"-scheme", "rope", "-eval-len", "128", "-train-len", "32"}, "inspect_rope_L32_n128.png"},
		{[]string{"-scheme", "rope", "-eval-len", "128", "-scaling", "ntk"}, "inspect_rope_ntk_L64_n128.png"},
		{[]string{"-scheme", "rope", "-eval-len", "128", "-scaling", "ntk", "-factor", "4"}, "inspect_rope_ntk_L64_n128_factor4.png"},
		{[]string{"-scheme", "rope", "-eval-len", "128", "-scaling", "yarn", "-beta-fast", "16"}, "inspect_rope_yarn_L64_n128_beta-fast16.png"},
		{[]string{"-scheme", "rope", "-eval-len", "128", "-base", "500"}, "inspect_rope_L64_n128_base500.png"},
		{[]string{"-scheme", "rope", "-eval-len", "128", "-dim", "8", "-heads", "2", "-layers", "1"}, "inspect_rope_L64_n128_dim8_heads2_layers1.png"},
		{[]string{"-scheme", "alibi", "-eval-len", "64"}, "inspect_alibi_L64_n64.png"},
		// -base is RoPE's: for another scheme it changes nothing, and the name says nothing of it.
		{[]string{"-scheme", "alibi", "-eval-len", "64", "-heads", "8", "-base", "500"}, "inspect_alibi_L64_n64_heads8.png"},
		{[]string{"-scheme", "t5", "-eval-len", "64", "-param", "buckets=16"}, "inspect_t5_L64_n64_param-buckets16.png"},
		{[]string{"-scheme", "t5", "-eval-len", "64", "-param", "buckets=8"}, "inspect_t5_L64_n64_param-buckets8.png"},
		{[]string{"-checkpoint", filepath.Join(run, measure.CheckpointFile), "-eval-len", "64"}, "inspect_rope_s2_n64.png"},
		{[]string{"-checkpoint", "rope_ntk.ckpt", "-eval-len", "64"}, "inspect_rope_ntk_n64.png"},
		{[]string{"-checkpoint", "rope_ntk.ckpt", "-eval-len", "128"}, "inspect_rope_ntk_n128.png"},
	} {
		code, out, stderr := inspect(t, dir, c.args...)
		if code != 0 || strings.TrimSpace(out) != "wrote "+c.name {
			t.Errorf("%v: exit %d, stdout %q, stderr %s; want it to write %s", c.args, code, out, stderr, c.name)
			continue
		}
		if _, err := os.Stat(filepath.Join(dir, c.name)); err != nil {
			t.Errorf("%v: %v", c.args, err)
		}
		if prev, ok := names[c.name]; ok {
			t.Errorf("%v and %v write the same %s", prev, c.args, c.name)
		}
		names[c.name] = c.args
		checkIgnored(t, c.name)
	}
	// A run's model.ckpt named from the folder it is run in.
	if code, out, stderr := inspect(t, run, "-checkpoint", measure.CheckpointFile, "-eval-len", "64"); code != 0 || strings.TrimSpace(out) != "wrote inspect_rope_s2_n64.png" {
		t.Errorf("-checkpoint model.ckpt in its run folder: exit %d, stdout %q, stderr %s; want inspect_rope_s2_n64.png", code, out, stderr)
	}
	// The same inspection again names the same file, which is kept.
	if code, _, stderr := inspect(t, dir, "-scheme", "rope", "-eval-len", "64", "-heads", "4"); code != 2 || !strings.Contains(stderr, "-out inspect_rope_L64_n64.png: the file exists") {
		t.Errorf("the same inspection again: exit %d, %s; want 2 and the file kept", code, stderr)
	}
}

// checkIgnored fails unless a pattern of the repository's .gitignore that holds no slash (so
// that it applies in every folder) matches name.
func checkIgnored(t *testing.T, name string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", ".gitignore"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range strings.Split(string(b), "\n") {
		p = strings.TrimSpace(p)
		if p == "" || strings.HasPrefix(p, "#") || strings.HasPrefix(p, "!") || strings.Contains(p, "/") {
			continue
		}
		if ok, _ := filepath.Match(p, name); ok {
			return
		}
	}
	t.Errorf("%s: no pattern of .gitignore ignores it in every folder", name)
}

func TestBadInput(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-scheme", "alibi", "-scaling", "yarn"}, "-scaling"},
		{[]string{"-scheme", "rope", "-scaling", "ntk", "-factor", "0.5"}, "-factor"},
		{[]string{"-scheme", "rope", "-scaling", "yarn", "-beta-fast", "1", "-beta-slow", "2"}, "-beta-fast"},
		{[]string{"-scheme", "rope", "-scaling", "longrope"}, "-scaling"},
		{[]string{"-scheme", "nonesuch"}, "-scheme"},
		{[]string{"-scheme", "rope", "-dim", "15"}, "even head dimension"},
		{[]string{"-scheme", "rope", "-dim", "0"}, "-dim"},
		{[]string{"-scheme", "rope", "-eval-len", "0"}, "-eval-len"},
		{[]string{"-scheme", "nope"}, "-scheme"},
		{[]string{"-scheme", "rope", "-dim", "1000000000", "-json"}, "-dim"},
		{[]string{"-scheme", "alibi", "-heads", "1000000000", "-json"}, "-heads"},
		{[]string{"-scheme", "alibi", "-heads", "5000", "-out", "a.png"}, "-heads"},
		{[]string{"-scheme", "sinusoidal", "-dim", "4096", "-heads", "1", "-eval-len", "4096", "-out", "a.png"}, "-dim and -eval-len"},
		{[]string{"-scheme", "rope", "-dim", "4096", "-heads", "64", "-eval-len", "16384", "-json"}, "-eval-len"},
		{[]string{"-scheme", "sinusoidal", "-dim", "4096", "-eval-len", "16384", "-json"}, "-eval-len"},
		{[]string{"-scheme", "t5", "-param", "buckets=3.5", "-json"}, "-param buckets: 3.5, want a whole number"},
		{[]string{"-scheme", "t5", "-param", "buckets=16.0", "-json"}, "-param buckets: 16.0, want a whole number"},
		{[]string{"-scheme", "t5", "-param", "buckets=", "-json"}, "-param buckets: empty value"},
		{[]string{"-scheme", "t5", "-param", "buckets"}, "-param \"buckets\": want name=value"},
		{[]string{"-scheme", "rope", "-param", "base=500", "-json"}, "-param base: give RoPE's base as -base"},
		{[]string{"-scheme", "rope", "-scaling", "llama3", "-original-max-position-embeddings", "64.5", "-json"}, "-original-max-position-embeddings: 64.5, want a whole number"},
	} {
		dir := t.TempDir()
		code, _, stderr := inspect(t, dir, c.args...)
		msg := strings.TrimSpace(stderr)
		if code != 2 || !strings.Contains(msg, c.want) || strings.Contains(msg, "\n") {
			t.Errorf("%v: exit %d, %q; want 2 and one line naming %s", c.args, code, msg, c.want)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 0 {
			t.Errorf("%v: wrote a file", c.args)
		}
	}
}

// TestLlama3JSON checks -scaling llama3 against HF's _compute_llama3_parameters, computed by
// position/testdata/golden.py, and that a field of the scaling is taken from its flag.
func TestLlama3JSON(t *testing.T) {
	code, out, stderr := inspect(t, t.TempDir(), "-scheme", "rope", "-scaling", "llama3", "-dim", "16", "-base", "500", "-train-len", "32", "-eval-len", "96", "-factor", "2.5",
		"-low-freq-factor", "2", "-high-freq-factor", "8", "-original-max-position-embeddings", "48", "-json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var r shown
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	want := []float64{0.9639437268410976, 0.253527088294847, 0.08458970107524513, 0.03889969889864292, 0.01788854381999832, 0.008226284754383117, 0.003782966436012703, 0.0017396474208327853}
	for i, w := range want {
		if len(r.InvFreq) != len(want) || math.Abs(r.InvFreq[i]-w) > 1e-9*w {
			t.Fatalf("inv_freq %v, want %v", r.InvFreq, want)
		}
	}
	if code, _, stderr := inspect(t, t.TempDir(), "-scheme", "rope", "-scaling", "ntk", "-beta-fast", "3", "-json"); code != 2 || !strings.Contains(stderr, "-beta-fast") {
		t.Fatalf("a field the scaling does not take: exit %d, %s", code, stderr)
	}
}

// shown is what a test reads of -json's output.
type shown struct {
	InvFreq         []float64     `json:"inv_freq"`
	AttentionFactor float64       `json:"attention_factor"`
	Slopes          []float64     `json:"slopes"`
	Table           [][]float64   `json:"table"`
	Bias            [][][]float64 `json:"bias"`
	Buckets         []int         `json:"buckets"`
}

// TestT5Buckets checks -json's buckets against T5's relative_position_bucket (bidirectional
// False, 32 buckets, max distance 128) computed by position/testdata/golden.py.
func TestT5Buckets(t *testing.T) {
	code, out, stderr := inspect(t, t.TempDir(), "-scheme", "t5", "-heads", "2", "-layers", "1", "-train-len", "128", "-eval-len", "200", "-json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var r shown
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	want := map[int]int{0: 0, 15: 15, 16: 16, 17: 16, 18: 16, 20: 17, 21: 18, 31: 21, 32: 21, 33: 21, 64: 26, 100: 30, 127: 31, 128: 31, 199: 31}
	for d, b := range want {
		if len(r.Buckets) != 200 || r.Buckets[d] != b {
			t.Fatalf("bucket of distance %d: %v, want %d", d, r.Buckets, b)
		}
	}
	if len(r.Bias) != 1 || len(r.Bias[0]) != 2 || len(r.Bias[0][0]) != 200 {
		t.Fatalf("bias shape: %d layers", len(r.Bias))
	}
	// Distances in one bucket share a bias.
	if r.Bias[0][1][18] != r.Bias[0][1][16] || r.Bias[0][1][20] == r.Bias[0][1][16] {
		t.Fatalf("bias by bucket: %v", r.Bias[0][1][:20])
	}
}

// TestCheckpoint trains a tiny KERPLE model, then shows its trained biases: one curve per head
// and layer, the checkpoint's own numbers, and not the initial ones.
func TestCheckpoint(t *testing.T) {
	dir := t.TempDir()
	corpus := cmdtest.TextCorpus(t)
	c := config.Default()
	c.Name = "kerple"
	c.Data = data.Config{Corpus: "text", Path: corpus}
	c.Model.DModel, c.Model.Layers, c.Model.Heads = 16, 2, 2
	c.Position = position.Config{Scheme: "kerple"}
	c.Train.SeqLen, c.Train.BatchSize, c.Train.Steps, c.Train.LogEvery = 16, 4, 20, 5
	c.Eval = config.Eval{Lengths: []int{16}, Tokens: 256, BatchTokens: 256}
	if err := c.Complete(); err != nil {
		t.Fatal(err)
	}
	rc, err := c.Resolve()
	if err != nil {
		t.Fatal(err)
	}
	run := &training.Run{Resolved: rc, Dir: filepath.Join(dir, "run")}
	if _, err := run.Execute(context.Background()); err != nil {
		t.Fatal(err)
	}
	ckpt := filepath.Join(run.Dir, measure.CheckpointFile)
	code, out, stderr := inspect(t, dir, "-checkpoint", ckpt, "-eval-len", "32", "-json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var r shown
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Bias) != 2 || len(r.Bias[0]) != 2 || len(r.Bias[0][0]) != 32 {
		t.Fatalf("bias: %d layers, want 2 of 2 heads of 32 distances", len(r.Bias))
	}
	trained, err := training.LoadCheckpoint(ckpt)
	if err != nil {
		t.Fatal(err)
	}
	w := trained.Model.SchemeWeights(0) // r1, r2 by (layer, head)
	for l := 0; l < 2; l++ {
		for h := 0; h < 2; h++ {
			r1, r2 := w[0][l*2+h], w[1][l*2+h]
			want := -r1 * math.Log1p(r2*31)
			if math.Abs(r.Bias[l][h][31]-want) > 1e-9*math.Abs(want) {
				t.Errorf("layer %d head %d: bias at 31 = %g, want %g from the checkpoint", l, h, r.Bias[l][h][31], want)
			}
		}
	}
	// The initial r1 of layer 1, head 0 is 0.5 and r2 0.25: training moved them.
	if w[0][2] == 0.5 || w[1][2] == 0.25 {
		t.Errorf("the checkpoint holds the initial weights %v: not trained", w)
	}
	if code, out, stderr := inspect(t, dir, "-checkpoint", ckpt); code != 0 || strings.TrimSpace(out) != "wrote inspect_run_n512.png" {
		t.Fatalf("drawing: exit %d, stdout %q: %s; want inspect_run_n512.png, after the run's folder", code, out, stderr)
	}
	if code, _, stderr := inspect(t, dir, "-checkpoint", ckpt, "-scheme", "rope"); code != 2 || !strings.Contains(stderr, "-scheme") {
		t.Fatalf("-scheme with -checkpoint: exit %d: %s", code, stderr)
	}
}

// TestPartialCheckpoint checks that a checkpoint saved before training finished is shown as
// partly trained, as cmd/eval says it: in the JSON, the picture's title and the output.
func TestPartialCheckpoint(t *testing.T) {
	dir := t.TempDir()
	c := config.Default()
	c.Name = "partial"
	c.Data = data.Config{Corpus: "text", Path: cmdtest.TextCorpus(t)}
	c.Model.DModel, c.Model.Layers, c.Model.Heads = 16, 1, 2
	c.Position = position.Config{Scheme: "kerple"}
	c.Train.SeqLen, c.Train.BatchSize, c.Train.Steps = 16, 4, 10
	c.Eval = config.Eval{Lengths: []int{16}, Tokens: 256, BatchTokens: 256}
	if err := c.Complete(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // interrupted at its start: saved at train step 0 of 10
	rc, err := c.Resolve()
	if err != nil {
		t.Fatal(err)
	}
	run := &training.Run{Resolved: rc, Dir: filepath.Join(dir, "run")}
	if _, err := run.Execute(ctx); !errors.Is(err, measure.ErrInterrupted) {
		t.Fatalf("interrupted run: %v", err)
	}
	ckpt := filepath.Join(run.Dir, measure.CheckpointFile)
	code, out, stderr := inspect(t, dir, "-checkpoint", ckpt, "-eval-len", "16", "-json")
	var r struct {
		Partial string `json:"partial"`
	}
	if err := json.Unmarshal([]byte(out), &r); code != 0 || err != nil || r.Partial != "train step 0 of 10" {
		t.Errorf("-json: exit %d, partial %q (%v), stderr %s; want it to say train step 0 of 10", code, r.Partial, err, stderr)
	}
	code, out, stderr = inspect(t, dir, "-checkpoint", ckpt, "-eval-len", "16", "-out", "k.png")
	if code != 0 || !strings.Contains(out, "partly trained: checkpoint saved at train step 0 of 10") {
		t.Errorf("picture: exit %d, stdout %q, stderr %s; want it to say it is partly trained", code, out, stderr)
	}
}

// TestBadOut checks that a picture file that cannot be written is refused before anything is
// drawn, with one line naming -out and no temporary file's name, and exit 2.
func TestBadOut(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "folder"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "file"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ out, want string }{
		{"missing/dir/a.png", "-out missing/dir/a.png: folder missing/dir does not exist"},
		{"folder", "-out folder: a folder"},
		{"file/a.png", "-out file/a.png: file is not a folder"},
	} {
		code, stdout, stderr := inspect(t, dir, "-scheme", "alibi", "-out", c.out)
		msg := strings.TrimSpace(stderr)
		if code != 2 || !strings.Contains(msg, c.want) || strings.Contains(msg, "\n") || strings.Contains(msg, ".tmp") || stdout != "" {
			t.Errorf("-out %s: exit %d, stdout %q, stderr %q; want 2 and one line %q", c.out, code, stdout, msg, c.want)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Errorf("the folder holds %d entries, want the 2 it had", len(entries))
	}
	if entries, _ := os.ReadDir(filepath.Join(dir, "folder")); len(entries) != 0 {
		t.Errorf("wrote into -out's folder")
	}
}

// TestBoundsWhatSchemesCompute asks for schemes whose numbers are too large to hold (FIRE's
// bias, heads × n² a layer; a fresh model's weights) or to compute in seconds: each is refused
// at once, in one line naming the flags and the estimate, before anything is allocated.
func TestBoundsWhatSchemesCompute(t *testing.T) {
	avail, _ := sysmem.Available()
	// One layer of FIRE's bias at 64 heads and 16384 positions, in float64: 128 GiB.
	fireLayer := uint64(64 * 16384 * 16384 * 8)
	// A fresh model of width 4096 × 64 with one layer holds at least its 12·d² weights in float64.
	wide := uint64(12 * 262144 * 262144 * 8)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-scheme", "fire", "-heads", "64", "-dim", "4", "-eval-len", "16384", "-json"}, "needs about 256.0 GiB of memory"},
		{[]string{"-scheme", "rope", "-dim", "4096", "-heads", "64", "-layers", "1", "-eval-len", "64", "-json"}, "of memory (the model's weights 6.0 TiB"},
		// About 64 s of FIRE's MLP and 1 GB, the 16 minutes in small.
		{[]string{"-scheme", "fire", "-heads", "4", "-dim", "4", "-layers", "64", "-eval-len", "4096", "-json"}, "would compute 4.29e+09 values at 4096 positions (64 layers × 4 heads), about 66 s"},
		// Every layer's bias by distance, printed: 67 million numbers.
		{[]string{"-scheme", "t5", "-heads", "64", "-dim", "4", "-layers", "64", "-eval-len", "16384", "-json"}, "a bias of 64 layers × 64 heads × 16384 positions to show is above 16777216 values"},
	} {
		if strings.Contains(c.want, "memory") && avail >= max(fireLayer, wide) {
			t.Logf("%v: skipped, %d bytes available", c.args, avail)
			continue
		}
		dir := t.TempDir()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		cmd := exec.CommandContext(ctx, binary, c.args...)
		cmd.Dir = dir
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		start := time.Now()
		err := cmd.Run()
		timedOut := ctx.Err() != nil
		cancel()
		if timedOut {
			t.Errorf("%v: still running after %v, want a refusal at once", c.args, time.Since(start).Round(time.Second))
			continue
		}
		msg := strings.TrimSpace(stderr.String())
		if cmd.ProcessState.ExitCode() != 2 || strings.Contains(msg, "\n") || !strings.HasPrefix(msg, "inspect: -dim, -heads, -layers and -eval-len: ") || !strings.Contains(msg, c.want) {
			t.Errorf("%v: %v, stderr %.300q; want exit 2 and one line naming the flags and %q", c.args, err, msg, c.want)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 0 {
			t.Errorf("%v: wrote a file", c.args)
		}
	}
}

// TestCriticalJSON checks -json's critical dimension (Liu et al. 2024) at the configs' defaults:
// head dimension 16, base 10⁴, trained at 64 tokens, d_extra = 2⌈8·log_10⁴(64/2π)⌉ = 6 and
// T_extra = 2π·10^1.5, whatever the scaling (it is the trained rotation's); and for p-RoPE,
// whose stopped pairs have no wavelength, nulls where it once failed on +Inf.
func TestCriticalJSON(t *testing.T) {
	type crit struct {
		Critical *struct {
			Dimension, Rotated int
			TExtra             *float64 `json:"t_extra"`
			DecayHolds         bool     `json:"decay_holds"`
		} `json:"critical"`
		Wavelengths []*float64 `json:"wavelengths"`
	}
	run := func(args ...string) crit {
		t.Helper()
		code, out, stderr := inspect(t, t.TempDir(), append(args, "-json")...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		var c crit
		if err := json.Unmarshal([]byte(out), &c); err != nil {
			t.Fatal(err)
		}
		return c
	}
	for _, args := range [][]string{{"-scheme", "rope"}, {"-scheme", "rope", "-scaling", "yarn"}} {
		c := run(args...)
		if c.Critical == nil || c.Critical.Dimension != 6 || c.Critical.Rotated != 16 || c.Critical.TExtra == nil ||
			math.Abs(*c.Critical.TExtra-2*math.Pi*math.Pow(10, 1.5)) > 1e-9 {
			t.Errorf("%v: critical %+v, want 6 of 16 and T_extra 2π·10^1.5", args, c.Critical)
		}
	}
	c := run("-scheme", "rope", "-param", "frequency_fraction=0.25")
	if c.Critical == nil || c.Critical.Dimension != 4 || c.Critical.TExtra != nil || len(c.Wavelengths) != 8 || c.Wavelengths[1] == nil || c.Wavelengths[2] != nil {
		t.Errorf("p-RoPE: critical %+v, wavelengths %v; want 4 dimensions, no T_extra, two wavelengths and six nulls", c.Critical, c.Wavelengths)
	}
	if c := run("-scheme", "alibi"); c.Critical != nil {
		t.Errorf("ALiBi: critical %+v, want none", c.Critical)
	}
	// Men et al.'s bound at head dimension 16 and 64 tokens is about 1718: base 10⁴ is above it,
	// 500 below (position.TestBaseBound computes the bound from its definition).
	for base, holds := range map[string]bool{"10000": true, "500": false} {
		if c := run("-scheme", "rope", "-base", base); c.Critical == nil || c.Critical.DecayHolds != holds {
			t.Errorf("base %s: critical %+v, want decay_holds %v", base, c.Critical, holds)
		}
	}
}
