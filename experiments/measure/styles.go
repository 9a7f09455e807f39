package measure

import "extrapolate/experiments/plot"

// Styles gives each series of the report its style in every figure, by its place in
// rep.Series; plain RoPE's is the reference's.
func (rep *Report) Styles() []plot.Style {
	ref := rep.Reference()
	out := make([]plot.Style, len(rep.Series))
	for i := range out {
		out[i] = plot.SeriesStyle(i)
		if i == ref {
			out[i] = plot.ReferenceStyle
		}
	}
	return out
}

// StyleOf is the style of a label's series, nil for a label not in the report.
func (rep *Report) StyleOf(label string) *plot.Style {
	for i, s := range rep.Series {
		if s.Label == label {
			return &rep.Styles()[i]
		}
	}
	return nil
}
