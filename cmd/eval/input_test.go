package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"extrapolate/data"
	"extrapolate/experiments/config"
	"extrapolate/experiments/evaluate"
	"extrapolate/experiments/measure"
	"extrapolate/experiments/training"
	"extrapolate/position"
)

// partial makes a checkpoint saved before training finished: a run interrupted at its start.
func partial(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	corpus := filepath.Join(dir, "corpus.txt")
	os.WriteFile(corpus, []byte(strings.Repeat("func f(x int) int { return x * 2 }\n", 200)), 0o644)
	c := config.Default()
	c.Name = "partial"
	c.Data = data.Config{Corpus: "text", Path: corpus}
	c.Model.DModel, c.Model.Layers, c.Model.Heads = 16, 1, 2
	c.Position = position.Config{Scheme: "rope"}
	c.Train.SeqLen, c.Train.BatchSize, c.Train.Steps = 16, 4, 10
	c.Eval = config.Eval{Lengths: []int{16, 32}, Tokens: 256, BatchTokens: 256}
	if err := c.Complete(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rc, err := c.Resolve()
	if err != nil {
		t.Fatal(err)
	}
	r := &training.Run{Resolved: rc, Dir: filepath.Join(dir, "run")}
	if _, err := r.Execute(ctx); !errors.Is(err, measure.ErrInterrupted) {
		t.Fatalf("interrupted run: %v", err)
	}
	return filepath.Join(r.Dir, measure.CheckpointFile)
}

// TestEvalRefusesUpFront checks the input eval used to find bad only after evaluating, or not
// at all: each gets exit 2 and one line before any evaluation, and nothing is written.
func TestEvalRefusesUpFront(t *testing.T) {
	rope := train(t, "rope")
	mid := partial(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	os.WriteFile(file, []byte("x"), 0o644)
	for _, c := range []struct {
		args []string
		out  string
		want string
	}{
		{[]string{"-checkpoint", rope}, filepath.Join(file, "out"), "results folder"},
		{[]string{"-checkpoint", rope, "-tokens", "1073741824"}, "", "eval.tokens"},
		{[]string{"-checkpoint", mid}, "", "train step 0 of 10"},
	} {
		out := c.out
		if out == "" {
			out = filepath.Join(t.TempDir(), "out")
		}
		code, stdout, stderr := runEval(t, append(c.args, "-out", out)...)
		msg := strings.TrimSpace(stderr)
		if code != 2 || !strings.Contains(msg, c.want) || strings.Contains(msg, "\n") {
			t.Errorf("%v: exit %d, stderr %q; want 2 and one line naming %q", c.args, code, msg, c.want)
		}
		if stdout != "" {
			t.Errorf("%v: printed %q", c.args, stdout)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%v: wrote %s", c.args, out)
		}
	}
	// A partly trained model can still be evaluated on purpose, and says so.
	out := filepath.Join(t.TempDir(), "out")
	code, stdout, stderr := runEval(t, "-checkpoint", mid, "-partial", "-scaling", "none", "-out", out, "-quiet")
	if code != 0 || !strings.Contains(stdout, "train step 0 of 10") {
		t.Fatalf("-partial: exit %d, stdout %q, stderr %q; want 0 and the step in the output", code, stdout, stderr)
	}
	b, _ := os.ReadFile(filepath.Join(out, evaluate.ScalingsJSON))
	if !strings.Contains(string(b), `"partial"`) {
		t.Errorf("the report does not say the checkpoint is partial:\n%s", b)
	}
}

// TestEvalRefusesXPosOverflow evaluates an xPos checkpoint with a small scale_base at a length
// where its scales would overflow float32: refused up front, naming the field, nothing written.
func TestEvalRefusesXPosOverflow(t *testing.T) {
	dir := t.TempDir()
	corpus := filepath.Join(dir, "corpus.txt")
	os.WriteFile(corpus, []byte(strings.Repeat("func f(x int) int { return x * 2 }\n", 2000)), 0o644)
	c := config.Default()
	c.Name = "xpos8"
	c.Data = data.Config{Corpus: "text", Path: corpus}
	c.Model.DModel, c.Model.Layers, c.Model.Heads = 16, 1, 2
	c.Position = position.Config{Scheme: "xpos", Params: map[string]any{"scale_base": 8}}
	c.Train.SeqLen, c.Train.BatchSize, c.Train.Steps = 16, 4, 5
	c.Eval = config.Eval{Lengths: []int{16, 32}, Tokens: 1024, BatchTokens: 1024}
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
	out := filepath.Join(dir, "scal")
	code, _, stderr := runEval(t, "-checkpoint", filepath.Join(r.Dir, measure.CheckpointFile), "-scaling", "none", "-lengths", "16,1024", "-out", out, "-quiet")
	msg := strings.TrimSpace(stderr)
	if code != 2 || strings.Contains(msg, "\n") || !strings.Contains(msg, "position.scale_base: 8 is too small for 1024 positions") {
		t.Fatalf("exit %d, stderr %q; want 2 and one line naming position.scale_base", code, msg)
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("eval wrote its folder before refusing")
	}
}
