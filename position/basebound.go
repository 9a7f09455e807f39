package position

import "math"

// Men et al. 2024 ("Base of RoPE Bounds Context Length", arXiv 2405.14591, §4) derive a lower
// bound on RoPE's base for a context length: a model tells a token similar to the query from
// random ones at distance m only while B(m) = Σ_i cos(m·θ_i) stays non-negative, and a base
// too small for the length makes it negative somewhere within it. Below the bound, they find,
// perplexity can look fine while retrieval within the context fails ("superficial" long
// context).

// DecayHolds reports whether B(m) = Σ_i cos(m·θ_i), over the frequencies θ_i a scheme turns
// by, is non-negative for every m from 0 to n: whether the base is at or above Men et al.'s
// bound for n positions. Stopped pairs (θ = 0) count as cos 0 = 1, as they do in the score.
func DecayHolds(invFreq []float64, n int) bool {
	for m := 0; m <= n; m++ {
		var b float64
		for _, f := range invFreq {
			b += math.Cos(float64(m) * f)
		}
		if b < 0 {
			return false
		}
	}
	return true
}

// boundSteps is the grid BaseBound searches: this many bases per decade.
const boundSteps = 1000

// BaseBound is Men et al.'s lower bound on the base of a RoPE head of headDim dimensions (θ_i =
// β^(−2i/headDim)) for a context of n positions: the smallest base β > 1 on a grid of 1000 per
// decade, up to 10¹², at which DecayHolds. It is 4.3·10³ for a head of 128 at 1024 tokens, the
// paper's Table; +Inf if no base on the grid holds. The property is not monotone in the base at
// small heads: for a head of 16 at 256 tokens the bound is about 8610, yet 10⁴ fails (B(91) < 0)
// and 2·10⁴ holds. So a run is judged by DecayHolds on its own frequencies, not by its base
// against the bound.
func BaseBound(headDim, n int) float64 {
	invFreq := make([]float64, headDim/2)
	for k := 1; k <= 12*boundSteps; k++ {
		base := math.Pow(10, float64(k)/boundSteps)
		for i := range invFreq {
			invFreq[i] = math.Pow(base, -2*float64(i)/float64(headDim))
		}
		if DecayHolds(invFreq, n) {
			return base
		}
	}
	return math.Inf(1)
}
