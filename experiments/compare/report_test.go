package compare

import (
	"strings"
	"testing"

	"extrapolate/experiments/config"
	"extrapolate/experiments/internal/testrun"
	"extrapolate/experiments/measure"
	"extrapolate/task"
)

// TestReportSaysWhatRunsTrain checks the report's opening line on runs that differ in steps,
// training length and data: it gives their range and the tasks, not the first run's values.
func TestReportSaysWhatRunsTrain(t *testing.T) {
	run := func(steps, seqLen int, tasks bool) measure.RunResult {
		c := testrun.Config(t, "rope")
		c.Train.Steps, c.Train.SeqLen = steps, seqLen
		if tasks {
			c.Task = &task.Config{Names: []string{"copy"}}
		}
		return measure.RunResult{Resolved: testrun.Resolved(t, c)}
	}
	steps := func(c config.Config) int { return c.Train.Steps }
	length := func(c config.Config) int { return c.Train.SeqLen }
	same := &Report{Report: measure.Report{Runs: []measure.RunResult{run(1500, 64, false), run(1500, 64, true)}}}
	if got := same.spread(steps, "%s steps", "%s steps, each its own"); got != "1500 steps" {
		t.Errorf("one number of steps: %q", got)
	}
	if got := same.trainData("the corpus"); got != "the corpus" {
		t.Errorf("a run on the corpus among task runs: %q, want the corpus", got)
	}
	mixed := &Report{Report: measure.Report{Runs: []measure.RunResult{run(2000, 38, true), run(6000, 64, true), run(2000, 41, true)}}}
	if got := mixed.spread(steps, "%s steps", "%s steps, each its own"); got != "2000 to 6000 steps, each its own" {
		t.Errorf("steps of task runs: %q", got)
	}
	if got := mixed.spread(length, "length %s", "lengths %s"); got != "lengths 38 to 64" {
		t.Errorf("lengths of task runs: %q", got)
	}
	if got := mixed.trainData("the corpus"); got == "the corpus" {
		t.Errorf("task runs said to train on the corpus")
	}
}

// TestReportSaysWhatModels checks the model in the opening line: one size when the runs share
// it, the range of each dimension and of the weights when a run has a larger model, whose
// size the Runs table then gives.
func TestReportSaysWhatModels(t *testing.T) {
	run := func(layers, width, params int) measure.RunResult {
		c := testrun.Config(t, "rope")
		c.Model.Layers, c.Model.DModel, c.Model.Heads = layers, width, 4
		return measure.RunResult{Resolved: testrun.Resolved(t, c), Result: &measure.Result{Params: params}}
	}
	same := &Report{Report: measure.Report{Runs: []measure.RunResult{run(2, 64, 100), run(2, 64, 100)}}}
	if got, want := same.modelPhrase(), "a 2-layer, 64-wide, 4-head model (about 100 weights)"; got != want {
		t.Errorf("one model: %q, want %q", got, want)
	}
	mixed := &Report{Report: measure.Report{Runs: []measure.RunResult{run(2, 64, 100), run(4, 128, 800), run(4, 64, 200)}}}
	if mixed.sameModel() {
		t.Errorf("runs of 2 and 4 layers said to share a model")
	}
	if got, want := mixed.modelPhrase(), "a 2- to 4-layer, 64- to 128-wide, 4-head model (about 100 to 800 weights; each run's in Runs)"; got != want {
		t.Errorf("models of several sizes: %q, want %q", got, want)
	}
	if got, want := modelSize(mixed.Runs[1].Config().Model), "4 × 128, 4 heads"; got != want {
		t.Errorf("a run's model: %q, want %q", got, want)
	}
}

// TestSummaryOfTaskRuns checks the terminal's summary: a comparison of task runs does not
// print the corpus perplexity of models that never saw the corpus, and one with a corpus run
// does.
func TestSummaryOfTaskRuns(t *testing.T) {
	run := func(tasks bool) measure.RunResult {
		c := testrun.Config(t, "rope")
		if tasks {
			c.Task, c.Train.SeqLen = &task.Config{Names: []string{"copy"}}, 38
		}
		return measure.RunResult{Resolved: testrun.Resolved(t, c)}
	}
	onTasks := &Report{Report: measure.Report{Runs: []measure.RunResult{run(true), run(true)}, Series: []*measure.Series{{Label: "rope_copy"}}}}
	if s := onTasks.Summary(); strings.Contains(s, "perplexity") || !strings.Contains(s, "trained on tasks") {
		t.Errorf("task runs' summary:\n%s", s)
	}
	mixed := &Report{Report: measure.Report{Runs: []measure.RunResult{run(true), run(false)}, Series: []*measure.Series{{Label: "rope"}}}}
	if s := mixed.Summary(); !strings.Contains(s, "perplexity") {
		t.Errorf("a corpus run's summary has no perplexity:\n%s", s)
	}
}
