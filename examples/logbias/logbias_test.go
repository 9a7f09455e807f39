package logbias_test

import (
	"context"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"extrapolate/data"
	_ "extrapolate/examples/logbias"
	"extrapolate/experiments"
	"extrapolate/internal/cmdtest"
	"extrapolate/position"
)

// TestTrainsAndEvaluates trains a tiny model with a scheme registered from this package, not
// from package position, evaluates it past the training length, and checks that its weight was
// saved and trained.
func TestTrainsAndEvaluates(t *testing.T) {
	dir := t.TempDir()
	corpus := cmdtest.TextCorpus(t)
	c := experiments.Default()
	c.Name = "logbias"
	c.Data = data.Config{Corpus: "text", Path: corpus}
	c.Model.DModel, c.Model.Layers, c.Model.Heads = 16, 1, 2
	c.Position = position.Config{Scheme: "logbias", Params: map[string]any{"slope": 0.5}}
	c.Train.SeqLen, c.Train.BatchSize, c.Train.Steps, c.Train.LogEvery = 16, 4, 30, 5
	c.Eval = experiments.Eval{Lengths: []int{16, 64}, Tokens: 512, BatchTokens: 256}
	if err := c.Complete(); err != nil {
		t.Fatal(err)
	}
	rc, err := c.Resolve()
	if err != nil {
		t.Fatal(err)
	}
	r := &experiments.Run{Resolved: rc, Dir: filepath.Join(dir, "run")}
	res, err := r.Execute(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range res.Lengths {
		if !l.Applicable || l.Loss == nil || !(*l.Loss > 0) || math.IsInf(*l.Loss, 0) {
			t.Fatalf("length %d: %+v", l.Length, l)
		}
	}
	trained, err := experiments.LoadCheckpoint(filepath.Join(r.Dir, experiments.CheckpointFile))
	if err != nil {
		t.Fatal(err)
	}
	slopes := trained.Model.SchemeWeights(0)
	if len(slopes) != 1 || len(slopes[0]) != 2 {
		t.Fatalf("the checkpoint holds scheme weights %v, want one slope per head", slopes)
	}
	for h, a := range slopes[0] {
		if a == 0.5 {
			t.Errorf("head %d: the slope is still its initial 0.5: not trained", h)
		}
	}
	// A field the scheme does not declare is an error naming it.
	c.Position = c.Position.With("slopes", 1)
	if err := c.Complete(); err == nil || !strings.Contains(err.Error(), "position.slopes") {
		t.Fatalf("unknown field: %v", err)
	}
}
