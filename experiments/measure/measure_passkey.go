package measure

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"extrapolate/experiments/config"
)

// passkeyMeasure is passkey retrieval by length and depth, on documents of its own, for a run
// trained with passkeys. The run's results file keeps its cells, under "passkey".
type passkeyMeasure struct{}

func (passkeyMeasure) Name() string { return "passkey" }
func (passkeyMeasure) Files() []string {
	return []string{PasskeyCSV, PasskeyJSON, PasskeyPNG, PasskeySVG}
}
func (passkeyMeasure) Selects(c config.Config) bool { return c.Train.Passkey != nil }

func (passkeyMeasure) Start(ev *Evaluation) (Recorder, error) { return &passkeyRun{ev: ev}, nil }

// passkeyRun measures one run.
type passkeyRun struct {
	ev    *Evaluation
	cells []PasskeyResult
}

func (r *passkeyRun) Evaluate(ctx context.Context) error {
	var err error
	r.cells, err = evaluatePasskey(ctx, r.ev.Model, r.ev.Scheme, r.ev.Corpus, r.ev.Config.Eval, r.ev.Progress)
	return err
}

func (r *passkeyRun) Record(dir string, res *Result) error {
	if len(r.cells) == 0 {
		return nil
	}
	if err := res.SetMeasurement(passkeyMeasure{}.Name(), r.cells); err != nil {
		return err
	}
	return writePasskey(dir, res, r.cells)
}

// PasskeyOf is a run's passkey retrieval, as its results file keeps it; none when it has none
// or it does not read (which the report's section says).
func PasskeyOf(res *Result) []PasskeyResult {
	var cells []PasskeyResult
	if _, err := res.Measurement(passkeyMeasure{}.Name(), &cells); err != nil {
		return nil
	}
	return cells
}

// Summary is the run's retrieval by depth and length.
func (passkeyMeasure) Summary(res *Result) string {
	if cells := PasskeyOf(res); len(cells) > 0 {
		return passkeyTable(cells, res.TrainLen)
	}
	return ""
}

// Section gathers retrieval by label, for the labels whose runs have it, every run's cells
// checked first (checkPasskey).
func (passkeyMeasure) Section(rep *Report) (Section, error) {
	for _, r := range rep.Runs {
		if err := checkPasskey(r); err != nil {
			return nil, fmt.Errorf("%s: passkey: %w", filepath.Join(r.Dir, ResultsJSON), err)
		}
	}
	sps := rep.Passkey()
	if len(sps) == 0 {
		return nil, nil
	}
	return passkeySection{rep, sps}, nil
}

type passkeySection struct {
	rep *Report
	sps []SeriesPasskey
}

func (s passkeySection) Write(dir string) error { return s.rep.writePasskey(dir, s.sps) }
func (s passkeySection) Markdown(w io.Writer)   { s.rep.passkeyMarkdown(w, s.sps) }

// checkPasskey checks what a finished run's results file keeps of passkey retrieval: a run
// trained with passkeys has a cell at every evaluation length and depth, in that order, not
// applicable exactly where its scheme cannot take the length, and otherwise counts of the
// documents the evaluation draws. A run without passkeys is not looked at.
func checkPasskey(r RunResult) error {
	var cells []PasskeyResult
	found, err := r.Result.Measurement(passkeyMeasure{}.Name(), &cells)
	switch {
	case err != nil:
		return fmt.Errorf("does not read: %v", err)
	case r.Result.Status != "ok" || r.Config.Train.Passkey == nil:
		return nil
	case !found:
		return errors.New("missing, but the run trains with passkeys")
	}
	_, eval := r.Resolved.Schemes()
	i := 0
	for _, n := range r.Config.Eval.Lengths {
		why, err := NotTaken(eval, r.Config.Model.Layers, n)
		if err != nil {
			return err
		}
		for _, depth := range PasskeyDepths {
			if i == len(cells) {
				return fmt.Errorf("no cell at length %d, depth %g: want one at every evaluation length and depth", n, depth)
			}
			c := cells[i]
			i++
			if c.Length != n || c.Depth != depth {
				return fmt.Errorf("cell %d at length %d, depth %g, want length %d, depth %g", i, c.Length, c.Depth, n, depth)
			}
			if err := checkPasskeyCell(c, why); err != nil {
				return fmt.Errorf("length %d, depth %g: %w", n, depth, err)
			}
		}
	}
	if i < len(cells) {
		return fmt.Errorf("%d cells, want %d: one at every evaluation length and depth", len(cells), i)
	}
	return nil
}

// checkPasskeyCell checks one cell, at a length the scheme cannot take for the reason why (""
// when it can).
func checkPasskeyCell(c PasskeyResult, why string) error {
	switch {
	case !c.Applicable && why == "":
		return fmt.Errorf("not applicable (%q), but the scheme takes %d positions: only the scheme declares a length not applicable", c.Reason, c.Length)
	case !c.Applicable && c.Reason == "":
		return errors.New("not applicable, without the reason")
	case !c.Applicable:
		return nil
	case why != "":
		return fmt.Errorf("scored, but the scheme cannot take %d positions (%s)", c.Length, why)
	case c.Docs != PasskeyDocs:
		return fmt.Errorf("docs: %d, want the %d the evaluation draws", c.Docs, PasskeyDocs)
	case c.Correct < 0 || c.Correct > c.Docs:
		return fmt.Errorf("correct: %d, want 0 to %d", c.Correct, c.Docs)
	case c.Accuracy != float64(c.Correct)/float64(c.Docs):
		return fmt.Errorf("accuracy %v, but %d of %d documents right is %v", c.Accuracy, c.Correct, c.Docs, float64(c.Correct)/float64(c.Docs))
	case !(c.Digits >= 0 && c.Digits <= 1):
		return fmt.Errorf("digits: %v, want a share from 0 to 1", c.Digits)
	}
	return nil
}
