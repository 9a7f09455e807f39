package perplexity

import (
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot/plotter"

	"extrapolate/experiments/measure"
	"extrapolate/experiments/plot"
)

// Section is the comparison's perplexity: its series' statistics (Report.Series), which the
// report holds for the claims.
func (Measure) Section(rep *measure.Report) (measure.Section, error) { return section{rep}, nil }

// section is the comparison's perplexity by length.
type section struct{ rep *measure.Report }

// Write writes the perplexity of every run and series as CSV, and its figure.
func (s section) Write(dir string) error {
	if err := measure.WriteFile(filepath.Join(dir, ComparisonCSV), CSV(s.rep)); err != nil {
		return err
	}
	return s.figure(dir)
}

// Markdown writes each series' effective length, the figure and the table of every series'
// perplexity by length; for task runs, whose perplexity on the corpus is not a result, where
// their files are.
func (s section) Markdown(w io.Writer) {
	rep := s.rep
	p := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	if rep.AllOnTasks() {
		// Go source the task models never trained on: a record, not a result.
		p("## Perplexity (not a result)\n\nEvery run here trained on tasks, never on the corpus: its perplexity on the corpus by length is kept as each run's record, in `%s` and `%s`, and not shown here. The results are in the tasks' section.\n", ComparisonCSV, ComparisonPNG)
		return
	}
	effectiveTable(w, rep)
	p("![perplexity against evaluation length](%s)\n\n", ComparisonPNG)
	p("The figure has %s.\n\n", rep.PanelsNote())

	p("## Perplexity (mean ± standard deviation over seeds)\n\n")
	p("| run | position |")
	for _, n := range rep.Lengths {
		p(" %d (%s) |", n, measure.Ratio(n, rep.TrainLen))
	}
	p("\n|---|---|%s\n", strings.Repeat("---:|", len(rep.Lengths)))
	for _, s := range rep.Series {
		p("| %s | %s |", s.Label, s.Position)
		for _, st := range s.Stats {
			p(" %s |", measure.FormatStat(st))
		}
		p("\n")
	}
	p("\nn/a: the scheme cannot, by design, be evaluated at that length (learned positions past their table).\n")
	for _, s := range rep.Series {
		if len(s.Failed) > 0 {
			rest := "its row averages the other seeds"
			if len(s.Failed) == runsOf(rep, s.Label) {
				rest = "its row has no numbers, and no claim is decided on it"
			}
			p("\n**%s failed** for seeds %v (training diverged); %s.\n", s.Label, s.Failed, rest)
		}
		for _, st := range s.Stats {
			if st.NonFinite != nil {
				p("\n**%s at %d: %s** for seeds %v; the cell averages the other seeds, and no claim is decided on it.\n", s.Label, st.Length, st.NonFiniteReason, st.NonFinite)
			}
		}
	}
}

// runsOf counts a label's runs, one a seed.
func runsOf(rep *measure.Report, label string) int {
	n := 0
	for _, r := range rep.Runs {
		if r.Label == label {
			n++
		}
	}
	return n
}

// figure draws every series' perplexity against evaluation length, mean ± std over seeds, in a
// panel per family of schemes, into ComparisonPNG and ComparisonSVG.
func (s section) figure(dir string) error {
	rep := s.rep
	lines := make([]measure.Line, len(rep.Series))
	for i, series := range rep.Series {
		var runs []*measure.Result
		for _, r := range rep.Runs {
			if r.Label == series.Label && r.Result.OK() {
				runs = append(runs, r.Result)
			}
		}
		lines[i] = line(Curve(series.Label, runs))
	}
	f := measure.Figure{
		Title:  fmt.Sprintf("%s: perplexity, trained at %d tokens, mean ± std over %d seeds", rep.Name, rep.TrainLen, len(rep.Seeds)),
		XLabel: "evaluation length (tokens, log scale)", YLabel: "perplexity (log scale)",
		LogY: true, Lines: lines,
	}
	return rep.WriteFigure(filepath.Join(dir, ComparisonPNG), filepath.Join(dir, ComparisonSVG), f)
}

// line is a curve's line: on a log axis a bar cannot reach 0, so the lower one stops at a tenth
// of the mean.
func line(c plot.Curve) measure.Line {
	l := measure.Line{Label: c.Legend()}
	for j, n := range c.Lengths {
		l.XYs = append(l.XYs, plotter.XY{X: float64(n), Y: c.Mean[j]})
		l.Low = append(l.Low, math.Min(c.Std[j], 0.9*c.Mean[j]))
		l.High = append(l.High, c.Std[j])
	}
	return l
}
