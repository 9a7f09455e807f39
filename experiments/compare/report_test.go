package compare

import (
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
