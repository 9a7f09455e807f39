package measure

import (
	"testing"

	"extrapolate/experiments/config"
	"extrapolate/experiments/plot"
	"extrapolate/position"
)

// TestSchemeKey checks that a RoPE run with a distance map, a normaliser, a gate or sinks has a
// key of its own, so that it is not drawn in the reference's grey, and that the defaults
// (softmax, no gate) leave plain RoPE's key.
func TestSchemeKey(t *testing.T) {
	rope := func(edit func(*config.Config)) config.Config {
		var c config.Config
		c.Position.Scheme = "rope"
		edit(&c)
		return c
	}
	for _, tc := range []struct {
		c    config.Config
		want string
	}{
		{rope(func(c *config.Config) {}), "rope"},
		{rope(func(c *config.Config) { c.Attention.Normaliser, c.Attention.Gate = "softmax", "none" }), "rope"},
		{rope(func(c *config.Config) { c.Position.DistanceMap = &position.DistanceMapConfig{Type: "self_extend"} }), "rope+self_extend"},
		{rope(func(c *config.Config) { c.Attention.Normaliser = "softpick" }), "rope+softpick"},
		{rope(func(c *config.Config) { c.Attention.Gate = "elementwise" }), "rope+gated"},
		{rope(func(c *config.Config) { c.Attention.Sinks = true }), "rope+sinks"},
	} {
		got := SchemeKey(tc.c)
		if got != tc.want {
			t.Errorf("SchemeKey = %q, want %q", got, tc.want)
		}
		if got != "rope" && plot.Same(plot.SchemeStyle(got), plot.ReferenceStyle) {
			t.Errorf("%s is drawn like the reference", got)
		}
	}
}
