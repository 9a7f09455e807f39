package accuracy_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"extrapolate/data"
	"extrapolate/examples/accuracy"
	"extrapolate/experiments/compare"
	"extrapolate/experiments/measure"
	"extrapolate/experiments/training"
	"extrapolate/internal/cmdtest"
	"extrapolate/model"
)

// TestAfterTheBuiltins checks that the measure, registered from this package's init, comes after
// every built-in one, and so does its section in a report and its field in a results file,
// although Go initializes this package, by its import path, before the built-in ones' list.
func TestAfterTheBuiltins(t *testing.T) {
	names := measure.Names()
	if len(names) < 2 || names[0] != "perplexity" || names[len(names)-1] != "accuracy" {
		t.Fatalf("measures %s, want the built-in ones from perplexity on, then accuracy last", strings.Join(names, " "))
	}
}

// TestInAComparison runs a tiny comparison that asks for the measure registered by this
// package: every run keeps its accuracy in its results, and the report has its section and
// files. One run's accuracy is recomputed here from its checkpoint, window by window, and the
// report's mean and standard deviation from the runs'.
func TestInAComparison(t *testing.T) {
	dir := t.TempDir()
	cfg := `name: base
data: {corpus: text, path: ` + cmdtest.TextCorpus(t) + `}
model: {d_model: 16, layers: 1, heads: 2}
position: {scheme: rope}
train: {seq_len: 16, batch_size: 4, steps: 30, warmup: 5}
eval: {lengths: [16, 32, 64], tokens: 512, batch_tokens: 256, measures: [accuracy]}
`
	os.WriteFile(filepath.Join(dir, "base.yaml"), []byte(cfg), 0o644)
	comp := `comparison: tiny
seeds: [1, 2]
runs:
  - {config: base, label: rope}
  - {config: base, label: learned, set: {position.scheme: learned}}
`
	path := filepath.Join(dir, "tiny.yaml")
	os.WriteFile(path, []byte(comp), 0o644)
	c, err := compare.LoadPlan(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "results")
	rep, err := (&compare.Runner{Plan: c, Dir: out, Command: "test"}).Execute(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	md, _ := os.ReadFile(filepath.Join(out, compare.ReportFile))
	if !strings.Contains(string(md), "## Next-token accuracy") {
		t.Fatalf("REPORT.md has no accuracy section:\n%s", md)
	}
	for _, f := range []string{accuracy.ComparisonCSV, accuracy.ComparisonPNG, filepath.Join(compare.RunsDir, "rope-s1", accuracy.RunCSV)} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Error(err)
		}
	}
	var perSeed, at16, at32 []float64
	for _, r := range rep.Runs {
		ls, err := accuracy.Of(r.Result)
		if err != nil || len(ls) != 3 {
			t.Fatalf("%s-s%d: accuracies %+v, %v", r.Label, r.Seed, ls, err)
		}
		if r.Label == "learned" && (ls[0].Applicable != true || ls[1].Applicable || ls[1].Reason == "") {
			t.Fatalf("learned positions past their table: %+v", ls)
		}
		if r.Label == "rope" {
			at16, at32, perSeed = append(at16, ls[0].Accuracy), append(at32, ls[1].Accuracy), append(perSeed, ls[2].Accuracy)
			if r.Seed == 1 {
				checkFromCheckpoint(t, r.Dir, ls)
			}
		}
	}
	// Two seeds: the sample standard deviation is their distance over √2.
	stat := func(x []float64) [2]float64 { return [2]float64{(x[0] + x[1]) / 2, math.Abs(x[0]-x[1]) / math.Sqrt2} }
	rope16, rope32 := stat(at16), stat(at32)
	mean, std := (perSeed[0]+perSeed[1])/2, math.Abs(perSeed[0]-perSeed[1])/math.Sqrt2
	want := fmt.Sprintf("| rope | %.1f%% ± %.1f%% | %.1f%% ± %.1f%% | %.1f%% ± %.1f%% |", 100*rope16[0], 100*rope16[1], 100*rope32[0], 100*rope32[1], 100*mean, 100*std)
	if !strings.Contains(string(md), want) {
		t.Fatalf("REPORT.md has no row %q:\n%s", want, md)
	}
}

// checkFromCheckpoint counts, window by window with the run's own weights, the targets at each
// length whose most likely token is right.
func checkFromCheckpoint(t *testing.T, dir string, got []accuracy.Length) {
	t.Helper()
	tr, err := training.LoadCheckpoint(filepath.Join(dir, measure.CheckpointFile))
	if err != nil {
		t.Fatal(err)
	}
	_, s := tr.Resolved.Schemes()
	corpus, err := data.Load(tr.Config().Data)
	if err != nil {
		t.Fatal(err)
	}
	set, err := data.NewEvalSet(corpus.Valid, tr.Config().Eval.Tokens)
	if err != nil {
		t.Fatal(err)
	}
	for i, n := range tr.Config().Eval.Lengths {
		// The pass's batch: the most windows within the budget that divide them all.
		ws, err := set.Plan(n, n)
		if err != nil {
			t.Fatal(err)
		}
		windows, batch := len(ws), tr.Config().Eval.BatchTokens/n
		for windows%batch != 0 {
			batch--
		}
		g, err := tr.Model.Graph(s, batch, n, model.Options{})
		if err != nil {
			t.Fatal(err)
		}
		right := 0
		for first := 0; first < windows; first += batch {
			set.FillWindows(g.IDs, g.Targets, n, ws[first:first+batch])
			if _, err := g.Run(); err != nil {
				t.Fatal(err)
			}
			logits := g.Logits().Data().([]float32)
			v := g.Logits().Shape()[1]
			for r, target := range g.Targets {
				best := 0
				for j, x := range logits[r*v : (r+1)*v] {
					if x > logits[r*v+best] {
						best = j
					}
				}
				if best == target {
					right++
				}
			}
		}
		g.Close()
		if got[i].Right != right || got[i].Tokens != set.Tokens {
			t.Errorf("length %d: %d of %d right, the checkpoint gives %d of %d", n, got[i].Right, got[i].Tokens, right, set.Tokens)
		}
	}
}
