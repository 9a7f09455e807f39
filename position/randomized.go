package position

import (
	"fmt"

	"extrapolate/internal/rng"
)

// Randomized positions (Ruoss et al. 2023): each batch's ids are n distinct positions of
// [0, noise_max_length), drawn uniformly and sorted, as the reference code's
// noisy_fixed_positional_encodings draws its indexes (jrandom.choice over
// arange(noise_max_length) without replacement, then jnp.sort). noise_max_length has no default
// there (NoisyRotaryParams and the others require it; the example sets 2048 for training lengths
// up to 40): a config gives it, as the longest length the model is meant to reach. The reference
// draws ids at test time too, and so does evaluation here (AtEvaluation): its models'
// randomized encodings (NOISY_ROTARY, NOISY_SIN_COS and the others in models/transformer.py)
// draw with no switch for evaluation, and range_evaluation.py hands the model a key at test
// time ("we also randomize at test time", the repository's issue #1): a model that has seen
// only sparse sorted draws has never seen its positions contiguous.
type randomizedParams struct {
	NoiseMaxLength int `yaml:"noise_max_length"`
}

func init() {
	RegisterIDs("randomized", IDsType{
		Doc:        "Ruoss et al. 2023: a sorted uniform draw of n distinct positions of [0, noise_max_length)",
		Params:     func() any { return &randomizedParams{} },
		RangeField: "noise_max_length",
		Range: func(p any, n int) (int, error) {
			l := p.(*randomizedParams).NoiseMaxLength
			if l == 0 {
				return 0, fmt.Errorf("train.positions.noise_max_length: not given; want the number of positions the ids are drawn from, at least the training length %d (the reference code has no default; its example sets 2048)", n)
			}
			return l, checkRange("noise_max_length", l, n)
		},
		Draw: func(p any, g *rng.SplitMix64, dst []int) {
			drawSubset(g, p.(*randomizedParams).NoiseMaxLength, dst)
		},
		AtEvaluation: true,
	})
}

// drawSubset writes into dst a uniform draw of len(dst) distinct values of [0, r), in increasing
// order, by Floyd's algorithm (Bentley & Floyd 1987): for j = r−n, …, r−1 it draws t uniform in
// [0, j] and takes t, or j when t is taken already. It draws exactly n numbers from g, and the
// values come out sorted by reading the marks in order.
func drawSubset(g *rng.SplitMix64, r int, dst []int) {
	taken := make([]bool, r)
	for j := r - len(dst); j < r; j++ {
		if t := randint(g, 0, j); taken[t] {
			taken[j] = true
		} else {
			taken[t] = true
		}
	}
	k := 0
	for x, ok := range taken {
		if ok {
			dst[k] = x
			k++
		}
	}
}
