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
	"strings"
	"testing"
	"time"

	"extrapolate/data"
	"extrapolate/experiments"
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
	_, out, _ = inspect(t, t.TempDir(), "-scheme", "sinusoidal", "-dim", "6", "-eval-len", "3", "-json")
	r = shown{}
	json.Unmarshal([]byte(out), &r)
	if len(r.Table) != 3 || len(r.Table[0]) != 6 || math.Abs(r.Table[1][2]-0.0463992234647) > 1e-9 {
		t.Fatalf("table %v", r.Table)
	}
}

func TestPictures(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"-scheme", "rope", "-scaling", "yarn", "-dim", "16", "-factor", "4"},
		{"-scheme", "rope"},
		{"-scheme", "alibi", "-heads", "4", "-eval-len", "16"},
		{"-scheme", "sinusoidal", "-dim", "32", "-eval-len", "64"},
		{"-scheme", "learned", "-dim", "8", "-train-len", "32", "-eval-len", "32"},
		{"-scheme", "t5", "-heads", "4", "-eval-len", "200"},
		{"-scheme", "kerple", "-heads", "4", "-layers", "2"},
		{"-scheme", "fire", "-heads", "2", "-layers", "2", "-eval-len", "64"},
		{"-scheme", "xpos", "-dim", "16", "-scaling", "llama3", "-factor", "4", "-low-freq-factor", "2"},
		{"-scheme", "mix", "-param", "layers=[rope, {scheme: rope, rotary_fraction: 0.5}, alibi, nope]", "-layers", "4", "-heads", "2", "-dim", "8"},
	} {
		code, _, stderr := inspect(t, dir, append(args, "-overwrite")...) // rope twice
		if code != 0 {
			t.Fatalf("%v: %s", args, stderr)
		}
		b, err := os.ReadFile(filepath.Join(dir, "inspect_"+args[1]+".png"))
		if err != nil || !bytes.HasPrefix(b, []byte("\x89PNG")) {
			t.Fatalf("%v: no PNG: %v", args, err)
		}
	}
	// Without -overwrite the picture of a last run is kept, and the command says so in one line.
	before, _ := os.ReadFile(filepath.Join(dir, "inspect_alibi.png"))
	code, _, stderr := inspect(t, dir, "-scheme", "alibi", "-heads", "8")
	after, _ := os.ReadFile(filepath.Join(dir, "inspect_alibi.png"))
	if msg := strings.TrimSpace(stderr); code != 2 || !strings.Contains(msg, "-out inspect_alibi.png: the file exists; give -overwrite") || !bytes.Equal(before, after) {
		t.Errorf("inspect over an existing picture: exit %d, stderr %q, replaced %v; want 2, one line, the file kept", code, msg, !bytes.Equal(before, after))
	}
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
		{[]string{"-scheme", "sinusoidal", "-dim", "4096", "-eval-len", "4096", "-out", "a.png"}, "-dim and -eval-len"},
		{[]string{"-scheme", "rope", "-dim", "4096", "-heads", "64", "-eval-len", "16384", "-json"}, "-eval-len"},
		{[]string{"-scheme", "sinusoidal", "-dim", "4096", "-eval-len", "16384", "-json"}, "-eval-len"},
		{[]string{"-scheme", "t5", "-param", "buckets=3.5", "-json"}, "-param buckets: 3.5, want a whole number"},
		{[]string{"-scheme", "t5", "-param", "buckets=16.0", "-json"}, "-param buckets: 16.0, want a whole number"},
		{[]string{"-scheme", "t5", "-param", "buckets=", "-json"}, "-param buckets: empty value"},
		{[]string{"-scheme", "t5", "-param", "buckets"}, "-param \"buckets\": want name=value"},
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
	code, out, stderr := inspect(t, t.TempDir(), "-scheme", "t5", "-heads", "2", "-eval-len", "200", "-json")
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
	c := experiments.Default()
	c.Name = "kerple"
	c.Data = data.Config{Corpus: "text", Path: corpus}
	c.Model.DModel, c.Model.Layers, c.Model.Heads = 16, 2, 2
	c.Position = position.Config{Scheme: "kerple"}
	c.Train.SeqLen, c.Train.BatchSize, c.Train.Steps, c.Train.LogEvery = 16, 4, 20, 5
	c.Eval = experiments.Eval{Lengths: []int{16}, Tokens: 256, BatchTokens: 256}
	if err := c.Complete(); err != nil {
		t.Fatal(err)
	}
	rc, err := c.Resolve()
	if err != nil {
		t.Fatal(err)
	}
	run := &experiments.Run{Resolved: rc, Dir: filepath.Join(dir, "run")}
	if _, err := run.Execute(context.Background()); err != nil {
		t.Fatal(err)
	}
	ckpt := filepath.Join(run.Dir, experiments.CheckpointFile)
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
	trained, err := experiments.LoadCheckpoint(ckpt)
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
	if code, _, stderr := inspect(t, dir, "-checkpoint", ckpt); code != 0 {
		t.Fatalf("drawing: exit %d: %s", code, stderr)
	}
	if code, _, stderr := inspect(t, dir, "-checkpoint", ckpt, "-scheme", "rope"); code != 2 || !strings.Contains(stderr, "-scheme") {
		t.Fatalf("-scheme with -checkpoint: exit %d: %s", code, stderr)
	}
}

// TestPartialCheckpoint checks that a checkpoint saved before training finished is shown as
// partly trained, as cmd/eval says it: in the JSON, the picture's title and the output.
func TestPartialCheckpoint(t *testing.T) {
	dir := t.TempDir()
	c := experiments.Default()
	c.Name = "partial"
	c.Data = data.Config{Corpus: "text", Path: cmdtest.TextCorpus(t)}
	c.Model.DModel, c.Model.Layers, c.Model.Heads = 16, 1, 2
	c.Position = position.Config{Scheme: "kerple"}
	c.Train.SeqLen, c.Train.BatchSize, c.Train.Steps = 16, 4, 10
	c.Eval = experiments.Eval{Lengths: []int{16}, Tokens: 256, BatchTokens: 256}
	if err := c.Complete(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // interrupted at its start: saved at train step 0 of 10
	rc, err := c.Resolve()
	if err != nil {
		t.Fatal(err)
	}
	run := &experiments.Run{Resolved: rc, Dir: filepath.Join(dir, "run")}
	if _, err := run.Execute(ctx); !errors.Is(err, experiments.ErrInterrupted) {
		t.Fatalf("interrupted run: %v", err)
	}
	ckpt := filepath.Join(run.Dir, experiments.CheckpointFile)
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
		{[]string{"-scheme", "rope", "-dim", "4096", "-heads", "64", "-eval-len", "64", "-json"}, "of memory (the model's weights 6.0 TiB"},
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
