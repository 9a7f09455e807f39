package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"extrapolate/data"
	"extrapolate/experiments/config"
	"extrapolate/experiments/evaluate"
	"extrapolate/experiments/measure"
	"extrapolate/experiments/training"
	"extrapolate/internal/cmdtest"
	"extrapolate/position"
)

var binary string

func TestMain(m *testing.M) { cmdtest.Main(m, "eval", &binary) }

func runEval(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	return cmdtest.Run(t, binary, "", args...)
}

// train makes a checkpoint of a tiny model with the given scheme.
func train(t *testing.T, scheme string) string {
	t.Helper()
	return trainWith(t, scheme, nil)
}

// trainWith makes a checkpoint of a tiny model with the given scheme, its config changed by set
// before it is completed.
func trainWith(t *testing.T, scheme string, set func(c *config.Config)) string {
	t.Helper()
	dir := t.TempDir()
	corpus := filepath.Join(dir, "corpus.txt")
	os.WriteFile(corpus, []byte(strings.Repeat("func f(x int) int { return x * 2 }\n", 200)), 0o644)
	c := config.Default()
	c.Name = "tiny"
	c.Data = data.Config{Corpus: "text", Path: corpus}
	c.Model.DModel, c.Model.Layers, c.Model.Heads = 16, 1, 2
	c.Position = position.Config{Scheme: scheme}
	c.Train.SeqLen, c.Train.BatchSize, c.Train.Steps = 16, 4, 10
	c.Eval = config.Eval{Lengths: []int{16, 32, 64}, Tokens: 256, BatchTokens: 256}
	if set != nil {
		set(&c)
	}
	if err := c.Complete(); err != nil {
		t.Fatal(err)
	}
	rc, err := c.Resolve()
	if err != nil {
		t.Fatal(err)
	}
	r := &training.Run{Resolved: rc, Dir: filepath.Join(dir, "run")}
	if _, err := r.Execute(context.Background()); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(r.Dir, measure.CheckpointFile)
}

func TestEvalScalings(t *testing.T) {
	ckpt := train(t, "rope")
	out := filepath.Join(t.TempDir(), "scal")
	code, stdout, stderr := runEval(t, "-checkpoint", ckpt, "-scaling", "none,linear,ntk,dynamic_ntk,yarn", "-out", out, "-quiet")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, s := range []string{"none", "linear(factor=auto)", "ntk(factor=auto)", "dynamic_ntk(factor=auto)", "yarn(factor=auto)"} {
		if !strings.Contains(stdout, s) {
			t.Errorf("the table lacks %s:\n%s", s, stdout)
		}
	}
	b, err := os.ReadFile(filepath.Join(out, evaluate.ScalingsJSON))
	if err != nil {
		t.Fatal(err)
	}
	var rep evaluate.Report
	if err := json.Unmarshal(b, &rep); err != nil || len(rep.Results) != 5 || len(rep.Results[0].Lengths) != 3 {
		t.Fatalf("report %+v: %v", rep, err)
	}
	for _, f := range []string{evaluate.ScalingsCSV, evaluate.ScalingsPNG, evaluate.ScalingsSVG} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Error(err)
		}
	}
}

func TestEvalBadInput(t *testing.T) {
	rope := train(t, "rope")
	alibi := train(t, "alibi")
	dir := t.TempDir()
	good, _ := os.ReadFile(rope)
	truncated := filepath.Join(dir, "truncated.ckpt")
	os.WriteFile(truncated, good[:len(good)/2], 0o644)
	flipped := filepath.Join(dir, "flipped.ckpt")
	bad := append([]byte(nil), good...)
	bad[len(bad)/3] ^= 0x10
	os.WriteFile(flipped, bad, 0o644)
	fifo := filepath.Join(dir, "pipe.ckpt")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	notCkpt := filepath.Join(dir, "config.yaml")
	os.WriteFile(notCkpt, []byte("name: x\n"+strings.Repeat("# a config, not a checkpoint\n", 10)), 0o644)
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"-checkpoint", filepath.Join(dir, "none.ckpt")}, "none.ckpt"},
		{[]string{"-checkpoint", truncated}, "corrupt"},
		{[]string{"-checkpoint", flipped}, "corrupt"},
		{[]string{"-checkpoint", notCkpt}, "not a checkpoint"},
		{[]string{"-checkpoint", fifo}, "pipe.ckpt: not a regular file"},
		{[]string{"-checkpoint", "/dev/zero"}, "/dev/zero: not a regular file"},
		{[]string{"-checkpoint", alibi, "-scaling", "yarn"}, "-scaling yarn"},
		{[]string{"-checkpoint", rope, "-scaling", "longrope"}, "position.scaling.type"},
		{[]string{"-checkpoint", rope, "-factor", "0.5"}, "position.scaling.factor"},
		{[]string{"-checkpoint", rope, "-factor", "big"}, "-factor"},
		{[]string{"-checkpoint", rope, "-scaling", "yarn", "-beta-fast", "1", "-beta-slow", "2"}, "beta_fast"},
		{[]string{"-checkpoint", rope, "-lengths", "16,x"}, "-lengths"},
		{[]string{"-checkpoint", rope, "-lengths", "16,48"}, "eval.lengths"},
		// An unset shell variable: not the default scalings.
		{[]string{"-checkpoint", rope, "-scaling", ""}, "-scaling: empty value"},
		{[]string{"-checkpoint", rope, "-scaling", " "}, "-scaling: empty value"},
		{[]string{"-checkpoint", rope, "-scaling", "none,,yarn"}, "-scaling none,,yarn: an empty name"},
	}
	for _, c := range cases {
		out := filepath.Join(t.TempDir(), "out")
		code, _, stderr := runEval(t, append(c.args, "-out", out, "-quiet")...)
		msg := strings.TrimSpace(stderr)
		if code != 2 || !strings.Contains(msg, c.want) || strings.Contains(msg, "\n") || strings.Contains(msg, "panic") {
			t.Errorf("%v: exit %d, stderr %q; want 2 and one line naming %q", c.args, code, msg, c.want)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%v: wrote %s", c.args, out)
		}
	}
}

// TestDefaultScalings checks that without -scaling a checkpoint is evaluated under the scalings
// its scheme takes: every type for RoPE, none alone for ALiBi, which takes no scaling.
func TestDefaultScalings(t *testing.T) {
	for _, c := range []struct {
		scheme string
		want   []string
	}{
		{"alibi", []string{"none"}},
		{"rope", append([]string{"none"}, position.ScalingTypes()...)},
	} {
		out := filepath.Join(t.TempDir(), "out")
		code, stdout, stderr := runEval(t, "-checkpoint", train(t, c.scheme), "-lengths", "16,32", "-out", out, "-quiet")
		if code != 0 {
			t.Errorf("%s: exit %d, stdout %q, stderr %q", c.scheme, code, stdout, stderr)
			continue
		}
		b, err := os.ReadFile(filepath.Join(out, evaluate.ScalingsJSON))
		if err != nil {
			t.Fatal(err)
		}
		var rep evaluate.Report
		if err := json.Unmarshal(b, &rep); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range rep.Results {
			name, _, _ := strings.Cut(r.Scaling, "(") // yarn(factor=auto)
			got = append(got, name)
		}
		if strings.Join(got, ",") != strings.Join(c.want, ",") {
			t.Errorf("%s: evaluated under %v, want %v", c.scheme, got, c.want)
		}
	}
}

// TestEvalPastBatchTokens evaluates a checkpoint at a length above its config's
// eval.batch_tokens, which cmd/eval cannot set: the evaluation is tiled, so it must be scored
// in batches of one window, and the output must say so and state the memory it takes.
func TestEvalPastBatchTokens(t *testing.T) {
	ckpt := train(t, "rope") // eval.batch_tokens 256
	out := filepath.Join(t.TempDir(), "out")
	code, stdout, stderr := runEval(t, "-checkpoint", ckpt, "-scaling", "none", "-lengths", "16,512", "-tokens", "512", "-out", out, "-quiet")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	want := "evaluated in batches of up to 512 tokens (eval.batch_tokens 256, raised to the longest length), needing about "
	if !strings.Contains(stdout, want) || !strings.Contains(stdout, "of memory (weights and optimizer state ") {
		t.Errorf("stdout %q lacks %q and the memory", stdout, want)
	}
	b, err := os.ReadFile(filepath.Join(out, evaluate.ScalingsJSON))
	if err != nil {
		t.Fatal(err)
	}
	var rep evaluate.Report
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if l := rep.Results[0].Lengths; len(l) != 2 || l[1].Length != 512 || l[1].Perplexity == nil || l[1].Tokens != 512 || rep.BatchTokens != 512 {
		t.Fatalf("results %+v, batch tokens %d; want a perplexity at 512, in batches of 512", l, rep.BatchTokens)
	}
}
