package measure

import (
	"context"
	"slices"

	"extrapolate/experiments/config"
	"extrapolate/model"
)

// The one place that asks a measure, or what it found in a run, for its optional interfaces, as
// database/sql's ctxutil.go asks a driver and position/adapter.go a scheme: every caller, in
// this package or another, goes through these functions, each with the measure's default where
// it does not act.

// Selects says whether m measures a run of config c: where c's eval.measures names it, or where
// it selects the run itself (Selector).
func Selects(m Measure, c config.Config) bool {
	s, ok := m.(Selector)
	return slices.Contains(c.Eval.Measures, m.Name()) || ok && s.Selects(c)
}

// Start starts m on a trained model (Starter): what it found, to be recorded, or nil for a
// measure that measures nothing in a run.
func Start(m Measure, ev *Evaluation) (Recorder, error) {
	s, ok := m.(Starter)
	if !ok {
		return nil, nil
	}
	return s.Start(ev)
}

// observerOf is rec as it observes the protocol's pass (PassObserver), if it does.
func observerOf(rec Recorder) (PassObserver, bool) {
	o, ok := rec.(PassObserver)
	return o, ok
}

// evaluate runs rec's evaluation of its own (Evaluator), if it has one.
func evaluate(ctx context.Context, rec Recorder) error {
	if e, ok := rec.(Evaluator); ok {
		return e.Evaluate(ctx)
	}
	return nil
}

// graphOptions adds to opts the options o needs the pass's graphs built with (GraphOptioner).
func graphOptions(o PassObserver, opts *model.Options) {
	if g, ok := o.(GraphOptioner); ok {
		g.GraphOptions(opts)
	}
}

// SummaryOf is m's lines of a run's summary (Summarizer), "" for a measure with none.
func SummaryOf(m Measure, res *Result) string {
	if s, ok := m.(Summarizer); ok {
		return s.Summary(res)
	}
	return ""
}

// SectionOf is m's section of a comparison's report (Reporter), nil for a measure with none.
func SectionOf(m Measure, rep *Report) (Section, error) {
	if r, ok := m.(Reporter); ok {
		return r.Section(rep)
	}
	return nil, nil
}

// GridSectionOf is m's section of a grid's report across its points (GridReporter), nil for a
// measure with none.
func GridSectionOf(m Measure, points []GridPoint) (Section, error) {
	if g, ok := m.(GridReporter); ok {
		return g.GridSection(points)
	}
	return nil, nil
}
