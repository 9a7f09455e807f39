package experiments

import "extrapolate/experiments/plot"

// styles gives each series of the report its style in every figure, by its place in
// rep.Series; plain RoPE's is the reference's.
func (rep *Report) styles() []plot.Style {
	ref := rep.reference()
	out := make([]plot.Style, len(rep.Series))
	for i := range out {
		out[i] = plot.SeriesStyle(i)
		if i == ref {
			out[i] = plot.ReferenceStyle
		}
	}
	return out
}

// styleOf is the style of a label's series, nil for a label not in the report.
func (rep *Report) styleOf(label string) *plot.Style {
	for i, s := range rep.Series {
		if s.Label == label {
			return &rep.styles()[i]
		}
	}
	return nil
}
