package compare

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"extrapolate/experiments/claims"
)

// TestComparisonOfCheckpoints runs a tiny comparison, then a second one of its rope runs'
// checkpoints (RunSpec.Checkpoints) beside a run it trains: the checkpoints are evaluated with
// the configs they were trained with, nothing is trained for them, their perplexities are
// those of the first comparison to the bit, and the claims are judged on them (rope_relative,
// checked, on the RoPE they are).
func TestComparisonOfCheckpoints(t *testing.T) {
	dir := t.TempDir()
	first, err := LoadPlan(writeTinyComparison(t, dir), nil)
	if err != nil {
		t.Fatal(err)
	}
	firstOut := filepath.Join(dir, "first")
	rep1, err := (&Runner{Plan: first, Dir: firstOut, Command: "test"}).Execute(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ckpt := func(seed int) string {
		return filepath.Join(firstOut, RunsDir, fmt.Sprintf("rope-s%d", seed), "model.ckpt")
	}
	comp := fmt.Sprintf(`comparison: elsewhere
seeds: [1, 2]
runs:
  - {config: base, label: alibi, set: {position.scheme: alibi}}
  - {label: rope_elsewhere, checkpoints: [%s, %s]}
claims: [rope_relative]
`, ckpt(1), ckpt(2))
	path := filepath.Join(dir, "elsewhere.yaml")
	if err := os.WriteFile(path, []byte(comp), 0o644); err != nil {
		t.Fatal(err)
	}
	plan, err := LoadPlan(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	rep2, err := (&Runner{Plan: plan, Dir: filepath.Join(dir, "second"), Progress: &log, Command: "test"}).Execute(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(log.String(), "trains the same weights as"); n != 2 {
		t.Errorf("%d runs took a checkpoint's weights, want 2:\n%s", n, log.String())
	}
	want, got := rep1.Series[0], rep2.Series[1]
	if want.Label != "rope" || got.Label != "rope_elsewhere" {
		t.Fatalf("series %s and %s, want rope and rope_elsewhere", want.Label, got.Label)
	}
	for _, n := range []int{16, 32, 64} {
		a, _ := want.At(n)
		b, _ := got.At(n)
		if a.PPLMean != b.PPLMean || a.PPLStd != b.PPLStd {
			t.Errorf("at %d: %v ± %v from the checkpoints, %v ± %v where they were trained", n, b.PPLMean, b.PPLStd, a.PPLMean, a.PPLStd)
		}
	}
	judged := false
	for _, c := range rep2.Claims {
		if c.ID == "rope_relative" {
			judged = c.Verdict == claims.Reproduced
		}
	}
	if !judged {
		t.Errorf("rope_relative not reproduced on the checkpoints: %+v", rep2.Claims)
	}
}

// TestCheckpointRunsRefused: what a run of checkpoints cannot be is refused naming its field.
func TestCheckpointRunsRefused(t *testing.T) {
	dir := t.TempDir()
	first, err := LoadPlan(writeTinyComparison(t, dir), nil)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "first")
	if _, err := (&Runner{Plan: first, Dir: out, Command: "test"}).Execute(context.Background()); err != nil {
		t.Fatal(err)
	}
	a := filepath.Join(out, RunsDir, "rope-s1", "model.ckpt")
	b := filepath.Join(out, RunsDir, "rope-s2", "model.ckpt")
	for _, c := range []struct{ run, want string }{
		{fmt.Sprintf("{label: x, checkpoints: [%s]}", a), "runs[0].checkpoints: 1 checkpoints for 2 seeds"},
		{fmt.Sprintf("{config: base, label: x, checkpoints: [%s, %s]}", a, b), "config and checkpoints both given"},
		{fmt.Sprintf("{checkpoints: [%s, %s]}", a, b), "runs[0].label: missing"},
		{fmt.Sprintf("{label: x, checkpoints: [%s, %s]}", a, filepath.Join(dir, "none.ckpt")), "runs[0].checkpoints[1]"},
		{fmt.Sprintf("{label: x, checkpoints: [%s, %s], set: {train.steps: 30}}", a, b), "a run of checkpoints takes evaluation settings only"},
	} {
		path := filepath.Join(dir, "bad.yaml")
		comp := "comparison: bad\nseeds: [1, 2]\nruns:\n  - " + c.run + "\n"
		if err := os.WriteFile(path, []byte(comp), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := LoadPlan(path, nil); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error with %q", c.run, err, c.want)
		}
	}
	// The evaluation may change: more lengths.
	path := filepath.Join(dir, "longer.yaml")
	comp := fmt.Sprintf("comparison: longer\nseeds: [1, 2]\nruns:\n  - {label: x, checkpoints: [%s, %s], set: {eval.lengths: [16, 32, 64, 128]}}\n", a, b)
	if err := os.WriteFile(path, []byte(comp), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadPlan(path, nil); err != nil {
		t.Errorf("a longer evaluation of the checkpoints: %v", err)
	}
}
