package measure

import (
	"image/color"
	"strings"

	"extrapolate/experiments/config"
	"extrapolate/experiments/plot"
	"extrapolate/position"
)

// SchemeKey names what a run's series is, for its style in every figure (plot.SchemeStyle):
// the scheme; RoPE's variant ("partial" for rotary_fraction, "p" for frequency_fraction below
// 1); the scaling's type; the attention temperature; "ft" when the run is fine-tuned at a
// longer length; "drope" when it drops its scheme (train.drope); and the kind of position ids
// it trains at (train.positions), joined by "+", with a distance map's type after the scaling and
// a normaliser other than softmax, "gated" and "sinks" after the temperature: "rope+yarn",
// "nope+logn_train", "rope+linear+ft", "rope+drope", "rope+randomized", "rope+self_extend",
// "alibi+gated". Like
// familyOf it reads the resolved config, not the label, which is free text.
func SchemeKey(c config.Config) string {
	parts := []string{c.Position.Scheme}
	if fraction(c.Position.Params["rotary_fraction"]) {
		parts = append(parts, "partial")
	}
	if fraction(c.Position.Params["frequency_fraction"]) {
		parts = append(parts, "p")
	}
	if sc := c.Position.Scaling; sc != nil {
		parts = append(parts, sc.Type)
	}
	// A distance map, a normaliser, a gate or sinks make a RoPE run more than plain RoPE: without
	// them in its key, it was drawn in the reference's grey, told apart by its dashes only.
	if m := c.Position.DistanceMap; m != nil {
		parts = append(parts, m.Type)
	}
	// So does a sliding window, the whole scheme's or a layer's: SWAN-GPT's layout is the
	// RoPE/NoPE mix with its RoPE layers windowed.
	if c.Position.Windowed() {
		parts = append(parts, "window")
	}
	if c.Attention.Scale != "" {
		parts = append(parts, c.Attention.Scale)
	}
	if n := c.Attention.Normaliser; n != "" && n != "softmax" {
		parts = append(parts, n)
	}
	if g := c.Attention.Gate; g != "" && g != "none" {
		parts = append(parts, "gated")
	}
	if c.Attention.Sinks {
		parts = append(parts, "sinks")
	}
	if c.Train.Finetune != nil {
		parts = append(parts, plot.FineTuned)
	}
	if c.Train.DroPE != nil {
		parts = append(parts, "drope")
	}
	if ids := c.Train.Positions; ids != nil {
		parts = append(parts, ids.Type)
	}
	return strings.Join(parts, "+")
}

// fraction reports whether a parameter is set to a number below 1: a part of RoPE's dimensions.
func fraction(v any) bool {
	switch x := v.(type) {
	case float64:
		return x < 1
	case int:
		return x < 1
	}
	return false
}

// Styles gives each series of the report its style in every figure, by its place in
// rep.Series: its scheme's (SchemeKey, schemeStyle), whatever the series' order, so that a
// scheme looks the same in every report; plain RoPE's is the reference's. A series that would
// be drawn like an earlier one (a scheme's runs on another task, or at another setting) keeps
// its colour and marker with another dash pattern (plot.Variant).
func (rep *Report) Styles() []plot.Style {
	ref := rep.Reference()
	out := make([]plot.Style, len(rep.Series))
	for i, s := range rep.Series {
		base := schemeStyle(rep.runOf(s.Label))
		st := base
		if i == ref {
			st = plot.ReferenceStyle
		}
		for k := 1; taken(out[:i], st); k++ {
			st = plot.Variant(base, k)
		}
		out[i] = st
	}
	return out
}

// taken reports whether a style is one of styles.
func taken(styles []plot.Style, s plot.Style) bool {
	for _, t := range styles {
		if plot.Same(t, s) {
			return true
		}
	}
	return false
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

// SchemeStyleOf is the style of a label's scheme, as it is before Styles tells a report's
// series of one scheme apart: for a figure that draws each scheme once in a panel, such as a
// panel per task.
func (rep *Report) SchemeStyleOf(label string) plot.Style {
	return schemeStyle(rep.runOf(label))
}

// schemeStyle is the style of a run's scheme: the table's for the repository's own schemes
// (plot.SchemeStyle), and for one registered from another package, the look it asks for
// (position.Drawn) or one from its family (plot.OwnStyle), so that no table is edited for it.
func schemeStyle(r RunResult) plot.Style {
	key := SchemeKey(r.Config())
	if r.Resolved == nil || position.Builtin(r.Config().Position.Scheme) {
		return plot.SchemeStyle(key)
	}
	s, _ := r.Resolved.Schemes()
	look, _ := position.LookOf(s)
	var c color.Color
	if look.Color != (color.RGBA{}) {
		c = look.Color
	}
	return plot.OwnStyle(key, familyOf(r), c, look.Marker)
}
