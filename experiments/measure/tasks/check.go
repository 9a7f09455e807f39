package tasks

import (
	"errors"
	"fmt"
	"math"

	"extrapolate/experiments/measure"
	"extrapolate/task"
)

// check checks what a finished run's results file keeps of its tasks, as a report reads it: a
// run trained on tasks has a cell for each of its tasks at each test size, in order, not
// applicable exactly where its scheme cannot take the size's window, and otherwise counts that
// add up. A run without tasks is not looked at.
func check(r measure.RunResult) error {
	var cells []Cell
	found, err := r.Result.Measurement(Measure{}.Name(), &cells)
	switch {
	case err != nil:
		return fmt.Errorf("does not read: %v", err)
	case !r.Result.OK() || r.Config().Task == nil:
		return nil
	case !found:
		return errors.New("holds no task cells, but the run trains on tasks")
	}
	tasks, examples := r.Resolved.Tasks()
	_, eval := r.Resolved.Schemes()
	i := 0
	for _, t := range tasks {
		for _, size := range t.Sizes().Test {
			if i == len(cells) {
				return fmt.Errorf("no cell for %s at size %d: want one for every task and test size", t.Name(), size)
			}
			c := cells[i]
			i++
			if c.Task != t.Name() || c.Size != size {
				return fmt.Errorf("cell %d is %s at size %d, want %s at size %d", i, c.Task, c.Size, t.Name(), size)
			}
			why, err := measure.NotTaken(eval, r.Config().Model.Layers, task.WindowLen(t, size))
			if err != nil {
				return err
			}
			if err := checkCell(c, t, why, examples); err != nil {
				return fmt.Errorf("%s at size %d: %w", t.Name(), size, err)
			}
		}
	}
	if i < len(cells) {
		return fmt.Errorf("%d cells, want %d: one for every task and test size", len(cells), i)
	}
	return nil
}

// checkCell checks one cell of task t, whose window the scheme cannot take for the reason why
// ("" when it can), scored on examples examples.
func checkCell(c Cell, t task.Task, why string, examples int) error {
	ratio := float64(c.Size) / float64(t.Sizes().Max)
	switch {
	case c.Ratio != ratio || c.Length != task.WindowLen(t, c.Size):
		return fmt.Errorf("ratio %g and window %d, want %g and %d", c.Ratio, c.Length, ratio, task.WindowLen(t, c.Size))
	case !c.Applicable && why == "":
		return fmt.Errorf("not applicable (%q), but the scheme takes a window of %d: only the scheme declares a size not applicable", c.Reason, c.Length)
	case !c.Applicable && c.Reason == "":
		return errors.New("not applicable, without the reason")
	case !c.Applicable:
		return nil
	case why != "":
		return fmt.Errorf("scored, but the scheme cannot take a window of %d (%s)", c.Length, why)
	case c.Examples != examples:
		return fmt.Errorf("%d examples, want task.examples %d", c.Examples, examples)
	case c.Exact < 0 || c.Exact > c.Examples || c.ExactMatch != float64(c.Exact)/float64(c.Examples):
		return fmt.Errorf("exact %d of %d examples with exact match %v: they do not agree", c.Exact, c.Examples, c.ExactMatch)
	case c.Tokens < c.Examples || c.TokensRight < 0 || c.TokensRight > c.Tokens ||
		math.Abs(c.TokenAccuracy-float64(c.TokensRight)/float64(c.Tokens)) > 1e-12:
		return fmt.Errorf("%d of %d answer bytes right with accuracy %v: they do not agree", c.TokensRight, c.Tokens, c.TokenAccuracy)
	case !(c.Low <= c.ExactMatch && c.ExactMatch <= c.High && c.Low >= 0 && c.High <= 1):
		return fmt.Errorf("interval [%v, %v] does not hold the exact match %v within [0, 1]", c.Low, c.High, c.ExactMatch)
	}
	return nil
}
