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

// writePositionsFigure draws every series' loss by position at its longest length, in octave bins
// of positions, mean ± std over seeds, in a panel per family.
func (rep *Report) writePositionsFigure(dir, protocol string, binned []binnedCurve) error {
	longest := 0
	for _, b := range binned {
		longest = max(longest, b.Length)
	}
	lines := make([]Line, len(rep.Series))
	for i, b := range binned {
		lines[i].Label = rep.Series[i].Label
		if b.Length != longest {
			lines[i].Label += fmt.Sprintf(" (length %d)", b.Length)
		}
		for k, p := range b.Bins {
			// At the bin's geometric middle in tokens seen, position+1.
			x := math.Sqrt(float64(p.From+1) * float64(p.To+1))
			lines[i].XYs = append(lines[i].XYs, plotter.XY{X: x, Y: p.Loss})
			lines[i].Low, lines[i].High = append(lines[i].Low, b.Std[k]), append(lines[i].High, b.Std[k])
		}
	}
	f := Figure{
		Title: fmt.Sprintf("%s: loss by position at length %d, in octaves of positions, mean ± std over %d seeds, %s",
			rep.Name, longest, len(rep.Seeds), protocol),
		XLabel: "tokens seen (position in the window + 1, log scale)", YLabel: "loss (nats per token)",
		Lines: lines,
	}
	return rep.WriteFigure(filepath.Join(dir, ComparisonPositionsPNG), filepath.Join(dir, ComparisonPositionsSVG), f)
}
