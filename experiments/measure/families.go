package measure

import (
	"extrapolate/experiments/config"
	"fmt"
	"strings"

	"extrapolate/experiments/plot"
)

// familyOf places a run by its resolved config, not its label, which is free text. A
// temperature comes first: rope_logn is compared with the other temperatures, not with the
// scalings.
func familyOf(c config.Config) plot.Family {
	switch {
	case c.Attention.Scale != "" || c.Position.Scheme == "mix":
		return plot.Temperature
	case c.Position.Scaling != nil:
		return plot.RoPE
	}
	switch c.Position.Scheme {
	case "nope", "learned", "sinusoidal":
		return plot.Absolute
	case "rope", "xpos":
		return plot.RoPE
	case "alibi", "t5", "kerple", "fire":
		return plot.Bias
	case "fox", "cope", "stickbreaking":
		return plot.Content
	}
	return plot.Other
}

// configOf is the config of a label's first run.
func (rep *Report) configOf(label string) (config.Config, bool) {
	for _, r := range rep.Runs {
		if r.Label == label {
			return r.Config, true
		}
	}
	return config.Config{}, false
}

// Families gives the indices in rep.Series of each family's series, in the series' order.
func (rep *Report) Families() [plot.NumFamilies][]int {
	var out [plot.NumFamilies][]int
	for i, s := range rep.Series {
		c, _ := rep.configOf(s.Label)
		f := familyOf(c)
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
