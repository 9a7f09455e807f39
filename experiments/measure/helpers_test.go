package measure

import (
	"testing"

	"gorgonia.org/tensor"

	"extrapolate/data"
	"extrapolate/experiments/config"
	"extrapolate/internal/cmdtest"
	"extrapolate/model"
	"extrapolate/position"
)

// The helpers of package experiments' tests, for the measures' tests here, below it.

// corpusFile writes a small text corpus and returns its path.
func corpusFile(t *testing.T) string { return cmdtest.TextCorpus(t) }

// tinyConfig is a run small enough for a unit test.
func tinyConfig(t *testing.T, scheme string) config.Config {
	t.Helper()
	c := config.Default()
	c.Name = "tiny-" + scheme
	c.Data = data.Config{Corpus: "text", Path: corpusFile(t)}
	c.Model.DModel, c.Model.Layers, c.Model.Heads = 16, 1, 2
	c.Position = position.Config{Scheme: scheme}
	c.Train.SeqLen, c.Train.BatchSize, c.Train.Steps, c.Train.LogEvery = 16, 4, 30, 5
	warm := 5
	c.Train.Warmup = &warm
	c.Eval = config.Eval{Lengths: []int{16, 32, 64}, Tokens: 512, BatchTokens: 256}
	if err := c.Complete(); err != nil {
		t.Fatal(err)
	}
	return c
}

// resolved is c resolved, for a run to carry.
func resolved(t testing.TB, c config.Config) *config.Resolved {
	t.Helper()
	r, err := c.Resolve()
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// newModel builds a fresh (untrained) model of a resolved config with its main phase's scheme,
// as a run does before training.
func newModel(r *config.Resolved) (*model.Model, error) {
	train, _ := r.Schemes()
	return model.New(r.ModelConfig(), train, tensor.Float32, r.Config().Seed)
}
