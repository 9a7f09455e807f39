package position

import (
	"math"
	"testing"
)

// ladder is RoPE's frequencies β^(−2i/d), written out here as the paper writes them.
func ladder(d int, base float64) []float64 {
	out := make([]float64, d/2)
	for i := range out {
		out[i] = 1 / math.Pow(base, float64(2*i)/float64(d))
	}
	return out
}

// TestBaseBound checks Men et al.'s bound against the paper's Table (4.3·10³ for a head of 128
// at 1024 tokens, to the two digits it gives), and at this project's sizes the property that
// defines it: B(m) = Σ cos(m·θ_i) ≥ 0 for m up to n at the bound, negative for some m within n
// a grid step below it.
func TestBaseBound(t *testing.T) {
	if got := BaseBound(128, 1024); math.Abs(got-4300) > 50 {
		t.Errorf("head 128 at 1024 tokens: %.0f, want 4.3e3 (Men et al., Table)", got)
	}
	for _, c := range []struct{ d, n int }{{16, 64}, {32, 64}, {16, 256}} {
		b := BaseBound(c.d, c.n)
		if !DecayHolds(ladder(c.d, b), c.n) {
			t.Errorf("d %d, n %d: B(m) < 0 at the bound %.1f", c.d, c.n, b)
		}
		below := b / math.Pow(10, 1.0/boundSteps)
		negative := false
		for m := 0; m <= c.n; m++ {
			var s float64
			for _, f := range ladder(c.d, below) {
				s += math.Cos(float64(m) * f)
			}
			negative = negative || s < 0
		}
		if !negative {
			t.Errorf("d %d, n %d: B(m) ≥ 0 for every m a step below the bound (%.1f): not the least", c.d, c.n, below)
		}
	}
	// Not monotone in the base: at a head of 16 and 256 tokens, B(91) = Σ cos(91·10^(−i/2)) over
	// i < 8 is about −0.22 at base 10⁴, while 2·10⁴ holds throughout.
	if DecayHolds(ladder(16, 1e4), 256) || !DecayHolds(ladder(16, 2e4), 256) {
		t.Error("head 16 at 256 tokens: want base 10⁴ failing and 2·10⁴ holding")
	}
	// The default model's bound at 64 tokens is far below its base of 10⁴, and a longer context
	// asks a larger base.
	if a, b := BaseBound(16, 64), BaseBound(16, 256); !(a < 1e4 && a < b) {
		t.Errorf("bounds %.0f at 64 and %.0f at 256 tokens: want below 10⁴ and rising", a, b)
	}
}
