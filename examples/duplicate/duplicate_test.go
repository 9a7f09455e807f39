package duplicate_test

import (
	"bytes"
	"testing"

	"extrapolate/data"
	"extrapolate/examples/duplicate"
	"extrapolate/experiments/config"
	"extrapolate/experiments/measure/tasks"
	"extrapolate/internal/cmdtest"
	"extrapolate/internal/rng"
	"extrapolate/internal/stepcheck"
	"extrapolate/task"
)

// TestAnswers checks the answers against the prompt's string written twice, by hand.
func TestAnswers(t *testing.T) {
	g := rng.SplitMix64{State: 1}
	for size := 1; size <= 40; size++ {
		e := duplicate.Duplicate{}.Generate(&g, size)
		s, _, ok := bytes.Cut(e.Text, []byte("="))
		if !ok || len(s) != size {
			t.Fatalf("size %d: %q", size, e.Text)
		}
		want := string(s) + string(s) + "."
		if got := string(e.AnswerBytes()); got != want || len(e.Text) > (duplicate.Duplicate{}).MaxLen(size) {
			t.Fatalf("size %d: %q answers %q, want %q", size, e.Text, got, want)
		}
	}
}

// TestTrainsAndScores trains a tiny model on the task, registered from this package, and
// checks that the run scored it at every test size.
func TestTrainsAndScores(t *testing.T) {
	if _, err := task.Lookup("duplicate"); err != nil {
		t.Fatal(err)
	}
	c := config.Default()
	c.Name = "duplicate"
	c.Data = data.Config{Corpus: "text", Path: cmdtest.TextCorpus(t)}
	c.Model.DModel, c.Model.Layers, c.Model.Heads = 16, 1, 2
	c.Train.SeqLen, c.Train.BatchSize, c.Train.Steps, c.Train.LogEvery = 41, 4, 20, 5
	c.Eval = config.Eval{Lengths: []int{16}, Tokens: 512, BatchTokens: 256}
	c.Task = &task.Config{Names: []string{"duplicate"}, Examples: 5}
	res, _ := stepcheck.Protocol(t, c)
	cells, err := tasks.Of(res)
	if err != nil {
		t.Fatal(err)
	}
	sizes := duplicate.Duplicate{}.Sizes().Test
	if len(cells) != len(sizes) {
		t.Fatalf("%d cells, want one per test size %v", len(cells), sizes)
	}
	for i, cell := range cells {
		if cell.Task != "duplicate" || cell.Size != sizes[i] || cell.Examples != 5 || cell.Tokens != 5*(2*sizes[i]+1) {
			t.Fatalf("cell %d: %+v", i, cell)
		}
	}
}
