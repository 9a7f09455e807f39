package measure

import (
	"fmt"
	"strings"

	"extrapolate/experiments/plot"
	"extrapolate/position"
)

// familyOf places a run by what its resolved config and scheme are, never by its label, which is
// free text, nor by the scheme's name, so that a scheme registered from another package lands
// in its family as a built-in one does. A temperature or a mix of schemes by layer comes first:
// rope_logn is compared with the other temperatures, not with the scalings; a scaling is
// RoPE's. Then the scheme's own parts decide: positions read from the content (a forget gate,
// stick-breaking, contextual positions), a rotation, a bias on the scores, or nothing but a
// table on the embeddings or no positions at all (absolute positions and NoPE).
func familyOf(r RunResult) plot.Family {
	c := r.Config()
	switch {
	case c.Attention.Scale != "" || c.Position.Scheme == "mix":
		return plot.Temperature
	case c.Position.Scaling != nil:
		return plot.RoPE
	case r.Resolved == nil:
		return plot.Other
	}
	s, _ := r.Resolved.Schemes()
	if position.IsPerLayer(s) {
		return plot.Temperature
	}
	_, fox := position.ForgetGateOf(s)
	_, stick := position.StickBreakingOf(s)
	_, cope := position.ContextPositionsOf(s)
	if fox || stick || cope {
		return plot.Content
	}
	if rot, err := position.RotationAt(s, 1); err == nil && rot != nil {
		return plot.RoPE
	}
	if f, err := position.BiasForm(s); err == nil && f != position.Absent || position.HasBiasRows(s) {
		return plot.Bias
	}
	return plot.Absolute
}

// runOf is a label's first run, zero when there is none.
func (rep *Report) runOf(label string) RunResult {
	for _, r := range rep.Runs {
		if r.Label == label {
			return r
		}
	}
	return RunResult{}
}

// Families gives the indices in rep.Series of each family's series, in the series' order.
func (rep *Report) Families() [plot.NumFamilies][]int {
	var out [plot.NumFamilies][]int
	for i, s := range rep.Series {
		f := familyOf(rep.runOf(s.Label))
		out[f] = append(out[f], i)
	}
	return out
}

// Reference is the index in rep.Series of plain RoPE (the label in rep.PlainRoPE), which every
// panel draws for comparison, or -1 when the comparison has none.
func (rep *Report) Reference() int {
	if rep.PlainRoPE == "" {
		return -1
	}
	for i, s := range rep.Series {
		if s.Label == rep.PlainRoPE {
			return i
		}
	}
	return -1
}

// PanelsNote says, for the report, how the figures are laid out: "a panel per family of schemes
// (absolute positions, ...), plain RoPE (rope) in grey in each, every panel on one y range, ...":
// a reader comparing levels across panels is told they compare (plot.ByFamily).
func (rep *Report) PanelsNote() string {
	var names []string
	for f, idx := range rep.Families() {
		if len(idx) > 0 {
			names = append(names, plot.Family(f).Title())
		}
	}
	note := fmt.Sprintf("a panel per family of schemes (%s)", strings.Join(names, ", "))
	if r := rep.Reference(); r >= 0 {
		note += fmt.Sprintf(", plain RoPE (%s) in grey in each", rep.Series[r].Label)
	}
	return note + ", every panel on one y range, the series in a panel offset a little in x so that lines which coincide show"
}
