package main

import (
	"math"
	"sort"

	"extrapolate/internal/rng"
)

// sampler draws each next byte from a row of logits: the most likely one at temperature 0,
// otherwise one drawn from the softmax of logits/temperature over the topK most likely (every
// byte when topK is 0), with a generator seeded once, so that a seed gives the same text.
type sampler struct {
	temperature float64
	topK        int
	rng         rng.SplitMix64
}

// newSampler returns a sampler with its generator seeded with seed.
func newSampler(temperature float64, topK int, seed uint64) *sampler {
	return &sampler{temperature: temperature, topK: topK, rng: rng.SplitMix64{State: seed}}
}

// next returns the index drawn from logits.
func (s *sampler) next(logits []float64) int {
	if s.temperature == 0 {
		return argmax(logits)
	}
	p := probabilities(logits, s.temperature, s.topK)
	// The top 53 bits make a uniform float64 in [0, 1), as math/rand's Float64 does.
	u := float64(s.rng.Next()>>11) / (1 << 53)
	last := 0
	for i, q := range p {
		if q == 0 {
			continue
		}
		if u < q {
			return i
		}
		u -= q
		last = i
	}
	return last // u left over from rounding: the last byte that can be drawn
}

// argmax is the index of the largest logit, the first on a tie, as model.Argmax picks it.
func argmax(logits []float64) int {
	best := 0
	for i, x := range logits {
		if x > logits[best] {
			best = i
		}
	}
	return best
}

// probabilities is the distribution next draws from: softmax(logits/temperature) over the topK
// largest logits, zero elsewhere (topK 0: over all). Logits tied at the k-th place go to the
// lower index first, so that top-k 1 is argmax. temperature must be above 0.
func probabilities(logits []float64, temperature float64, topK int) []float64 {
	order := make([]int, len(logits))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return logits[order[a]] > logits[order[b]] })
	if topK > 0 && topK < len(order) {
		order = order[:topK]
	}
	p := make([]float64, len(logits))
	top, sum := logits[order[0]], 0.0
	for _, i := range order {
		p[i] = math.Exp((logits[i] - top) / temperature) // at most 1: no overflow
		sum += p[i]
	}
	for _, i := range order {
		p[i] /= sum
	}
	return p
}
