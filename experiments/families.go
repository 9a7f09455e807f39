package experiments

import (
	"fmt"
	"strings"
)

// family is a group of position schemes that a comparison's figures draw in a panel of their
// own: nineteen lines in one panel cannot be told apart, four to eight can.
type family int

const (
	familyAbsolute    family = iota // positions added to the input: nope, learned, sinusoidal
	familyRoPE                      // rotations, with any scaling or fine-tuning
	familyBias                      // biases added to the attention scores
	familyTemperature               // an attention temperature, or schemes mixed by layer
	familyOther                     // a scheme registered outside this repository
	families
)

// title is the panel's title.
func (f family) title() string {
	return [...]string{
		familyAbsolute:    "absolute positions",
		familyRoPE:        "RoPE and its scalings",
		familyBias:        "attention biases",
		familyTemperature: "temperatures and mixes",
		familyOther:       "other schemes",
	}[f]
}

// familyOf places a run by its resolved config, not its label, which is free text. A
// temperature comes first: rope_logn is compared with the other temperatures, not with the
// scalings.
func familyOf(c Config) family {
	switch {
	case c.Attention.Scale != "" || c.Position.Scheme == "mix":
		return familyTemperature
	case c.Position.Scaling != nil:
		return familyRoPE
	}
	switch c.Position.Scheme {
	case "nope", "learned", "sinusoidal":
		return familyAbsolute
	case "rope", "xpos":
		return familyRoPE
	case "alibi", "t5", "kerple", "fire":
		return familyBias
	}
	return familyOther
}

// configOf is the config of a label's first run.
func (rep *Report) configOf(label string) (Config, bool) {
	for _, r := range rep.Runs {
		if r.Label == label {
			return r.Config, true
		}
	}
	return Config{}, false
}

// byFamily gives the indices in rep.Series of each family's series, in the series' order.
func (rep *Report) byFamily() [families][]int {
	var out [families][]int
	for i, s := range rep.Series {
		c, _ := rep.configOf(s.Label)
		f := familyOf(c)
		out[f] = append(out[f], i)
	}
	return out
}

// reference is the index in rep.Series of plain RoPE, which every panel draws for comparison,
// or -1 when the comparison has none, or several, as the claims find it.
func (rep *Report) reference() int {
	ref, err := rep.the(plainRoPE)
	if err != nil {
		return -1
	}
	for i, s := range rep.Series {
		if s == ref {
			return i
		}
	}
	return -1
}

// panelsNote says, for the report, how the figures are laid out: "a panel per family of schemes
// (absolute positions, ...), plain RoPE (rope) in grey in each".
func (rep *Report) panelsNote() string {
	var names []string
	for f, idx := range rep.byFamily() {
		if len(idx) > 0 {
			names = append(names, family(f).title())
		}
	}
	note := fmt.Sprintf("a panel per family of schemes (%s)", strings.Join(names, ", "))
	if r := rep.reference(); r >= 0 {
		note += fmt.Sprintf(", plain RoPE (%s) in grey in each", rep.Series[r].Label)
	}
	return note
}
