package position

import (
	"reflect"
	"testing"
)

// One scaling value, as a config holds it, is shared by every scheme built from it (a mix's
// layers, a comparison's phases): building a scheme must leave it as it was, and each scheme
// must compute with what it resolved for its own rotated width.
func TestScalingSharedUnchanged(t *testing.T) {
	sc := &Scaling{Type: "yarn", Factor: factor(4), Params: map[string]any{"beta_fast": 16}}
	before := *sc
	before.Params = map[string]any{"beta_fast": 16}
	wide, narrow := rope(t, 16, 10000, 128, sc), rope(t, 8, 10000, 128, sc)
	if !reflect.DeepEqual(*sc, before) {
		t.Fatalf("building schemes changed the shared scaling: %+v, was %+v", *sc, before)
	}
	for _, c := range []struct {
		r *RoPE
		d int
	}{{wide, 16}, {narrow, 8}} {
		got, gotFactor := c.r.Frequencies(512)
		want, wantFactor := yarnInvFreq(&yarnParams{BetaFast: 16, BetaSlow: 1, Truncate: true}, c.d, 10000, 128, 512, 4)
		near(t, "yarn frequencies", got, want)
		near(t, "yarn attention factor", []float64{gotFactor}, []float64{wantFactor})
	}
}

// A RoPE made without New has no resolved scaling, and computes plain frequencies rather than
// failing: there is no unchecked scaling to fall back on.
func TestRoPELiteralUnscaled(t *testing.T) {
	r := &RoPE{Base: 10000, Dim: 16, TrainLen: 128}
	got, a := r.Frequencies(512)
	near(t, "inv_freq", got, invFreq0(16, 10000))
	near(t, "attention factor", []float64{a}, []float64{1})
}
