package measure

import (
	"context"
	"extrapolate/experiments/config"
	"io"
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

// Section gathers retrieval by label, for the labels whose runs have it.
func (passkeyMeasure) Section(rep *Report) (Section, error) {
	for _, r := range rep.Runs {
		var cells []PasskeyResult
		if _, err := r.Result.Measurement(passkeyMeasure{}.Name(), &cells); err != nil {
			return nil, err
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
