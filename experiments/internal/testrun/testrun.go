// Package testrun holds what the tests of the run and of the comparison both build: a run small
// enough for a unit test, resolved. It is imported by tests only; the production packages export
// nothing for their tests.
package testrun

import (
	"testing"

	"extrapolate/data"
	"extrapolate/experiments/config"
	"extrapolate/internal/cmdtest"
	"extrapolate/position"
)

// Corpus writes a small text corpus and returns its path.
func Corpus(t *testing.T) string { return cmdtest.TextCorpus(t) }

// Config is a run of scheme small enough for a unit test.
func Config(t *testing.T, scheme string) config.Config {
	t.Helper()
	c := config.Default()
	c.Name = "tiny-" + scheme
	c.Data = data.Config{Corpus: "text", Path: Corpus(t)}
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

// Resolved is c resolved, for a run to carry.
func Resolved(t testing.TB, c config.Config) *config.Resolved {
	t.Helper()
	r, err := c.Resolve()
	if err != nil {
		t.Fatal(err)
	}
	return r
}
