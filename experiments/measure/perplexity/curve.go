package perplexity

import (
	"sort"

	"extrapolate/experiments/measure"
	"extrapolate/experiments/plot"
)

// writePlot draws perplexity against evaluation length, both axes logarithmic, with the
// training length marked, into RunPNG and RunSVG in dir.
func writePlot(dir, title string, trainLen int, curves []plot.Curve) error {
	return plot.Perplexity(dir, RunPNG, RunSVG, title, trainLen, curves)
}

// Curve aggregates runs of one scheme by length.
func Curve(label string, runs []*measure.Result) plot.Curve {
	c := plot.Curve{Label: label}
	byLen := map[int][]float64{}
	na, nonFinite := map[int]bool{}, map[int]bool{}
	for _, r := range runs {
		for _, l := range r.Lengths {
			switch {
			case l.Applicable && l.Perplexity != nil:
				byLen[l.Length] = append(byLen[l.Length], *l.Perplexity)
			case l.NonFinite:
				nonFinite[l.Length] = true
			default:
				na[l.Length] = true
			}
		}
	}
	for n := range byLen {
		c.Lengths = append(c.Lengths, n)
	}
	sort.Ints(c.Lengths)
	for _, n := range c.Lengths {
		m, s := measure.MeanStd(byLen[n])
		c.Mean, c.Std = append(c.Mean, m), append(c.Std, s)
	}
	for n := range na {
		if byLen[n] == nil && !nonFinite[n] {
			c.NotApplicable = append(c.NotApplicable, n)
		}
	}
	for n := range nonFinite {
		if byLen[n] == nil {
			c.NonFinite = append(c.NonFinite, n)
		}
	}
	sort.Ints(c.NotApplicable)
	sort.Ints(c.NonFinite)
	return c
}
