package passkey

import (
	"errors"
	"fmt"

	"extrapolate/experiments/measure"
)

// check checks what a finished run's results file keeps of passkey retrieval: a run
// trained with passkeys has a cell at every evaluation length and depth, in that order, not
// applicable exactly where its scheme cannot take the length, and otherwise counts of the
// documents the evaluation draws. A run without passkeys is not looked at.
func check(r measure.RunResult) error {
	var cells []Cell
	found, err := r.Result.Measurement(Measure{}.Name(), &cells)
	switch {
	case err != nil:
		return fmt.Errorf("does not read: %v", err)
	case !r.Result.OK() || r.Config().Train.Passkey == nil:
		return nil
	case !found:
		return errors.New("missing, but the run trains with passkeys")
	}
	_, eval := r.Resolved.Schemes()
	i := 0
	for _, n := range r.Config().Eval.Lengths {
		why, err := measure.NotTaken(eval, r.Config().Model.Layers, n)
		if err != nil {
			return err
		}
		for _, depth := range Depths {
			if i == len(cells) {
				return fmt.Errorf("no cell at length %d, depth %g: want one at every evaluation length and depth", n, depth)
			}
			c := cells[i]
			i++
			if c.Length != n || c.Depth != depth {
				return fmt.Errorf("cell %d at length %d, depth %g, want length %d, depth %g", i, c.Length, c.Depth, n, depth)
			}
			if err := checkCell(c, why); err != nil {
				return fmt.Errorf("length %d, depth %g: %w", n, depth, err)
			}
		}
	}
	if i < len(cells) {
		return fmt.Errorf("%d cells, want %d: one at every evaluation length and depth", len(cells), i)
	}
	return nil
}

// checkCell checks one cell, at a length the scheme cannot take for the reason why (""
// when it can).
func checkCell(c Cell, why string) error {
	switch {
	case !c.Applicable && why == "":
		return fmt.Errorf("not applicable (%q), but the scheme takes %d positions: only the scheme declares a length not applicable", c.Reason, c.Length)
	case !c.Applicable && c.Reason == "":
		return errors.New("not applicable, without the reason")
	case !c.Applicable:
		return nil
	case why != "":
		return fmt.Errorf("scored, but the scheme cannot take %d positions (%s)", c.Length, why)
	case c.Docs != Docs:
		return fmt.Errorf("docs: %d, want the %d the evaluation draws", c.Docs, Docs)
	case c.Correct < 0 || c.Correct > c.Docs:
		return fmt.Errorf("correct: %d, want 0 to %d", c.Correct, c.Docs)
	case c.Accuracy != float64(c.Correct)/float64(c.Docs):
		return fmt.Errorf("accuracy %v, but %d of %d documents right is %v", c.Accuracy, c.Correct, c.Docs, float64(c.Correct)/float64(c.Docs))
	case !(c.Digits >= 0 && c.Digits <= 1):
		return fmt.Errorf("digits: %v, want a share from 0 to 1", c.Digits)
	}
	return nil
}
