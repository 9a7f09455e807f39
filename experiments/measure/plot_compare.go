package measure

import (
	"fmt"
	"math"
	"path/filepath"

	"extrapolate/experiments/plot"

	"gonum.org/v1/plot/plotter"
)

// writePerplexityFigure draws every series' perplexity against evaluation length, mean ± std
// over seeds, in a panel per family of schemes, into ComparisonPNG and ComparisonSVG.
func (rep *Report) writePerplexityFigure(dir string) error {
	lines := make([]Line, len(rep.Series))
	for i, s := range rep.Series {
		var runs []*Result
		for _, r := range rep.Runs {
			if r.Label == s.Label && r.Result.Status == "ok" {
				runs = append(runs, r.Result)
			}
		}
		lines[i] = perplexityLine(CurveOf(s.Label, runs))
	}
	f := Figure{
		Title:  fmt.Sprintf("%s: perplexity, trained at %d tokens, mean ± std over %d seeds", rep.Name, rep.TrainLen, len(rep.Seeds)),
		XLabel: "evaluation length (tokens, log scale)", YLabel: "perplexity (log scale)",
		LogY: true, Lines: lines,
	}
	return rep.WriteFigure(filepath.Join(dir, ComparisonPNG), filepath.Join(dir, ComparisonSVG), f)
}

// perplexityLine is a curve's line: on a log axis a bar cannot reach 0, so the lower one stops
// at a tenth of the mean.
func perplexityLine(c plot.Curve) Line {
	l := Line{Label: c.Legend()}
	for j, n := range c.Lengths {
		l.XYs = append(l.XYs, plotter.XY{X: float64(n), Y: c.Mean[j]})
		l.Low = append(l.Low, math.Min(c.Std[j], 0.9*c.Mean[j]))
		l.High = append(l.High, c.Std[j])
	}
	return l
}
