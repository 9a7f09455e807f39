package task

import (
	"slices"

	"extrapolate/internal/rng"
)

// Sorting sorts a string of lowercase letters, repeats allowed: "dbcab=abbcd.", the size being
// its length. The sorting task of Kazemnejad et al. 2023 ("The Impact of Positional Encoding on
// Length Generalization in Transformers", McGill-NLP/length-generalization), on letters rather
// than numbers so that each item is one byte; on 1 to 16 letters, tested to 4x.
type Sorting struct{}

func init() { Register(Sorting{}) }

func (Sorting) Name() string { return "sorting" }
func (Sorting) Source() string {
	return "Kazemnejad et al. 2023, The Impact of Positional Encoding on Length Generalization in Transformers (McGill-NLP/length-generalization): sorting"
}
func (Sorting) Sizes() Sizes { return Sizes{Min: 1, Max: 16, Test: []int{8, 16, 24, 32, 48, 64}} }

// MaxLen is the string, "=", the string sorted and ".".
func (Sorting) MaxLen(size int) int { return 2*size + 2 }

func (Sorting) Generate(g *rng.SplitMix64, size int) Example {
	s := Letters(g, size)
	sorted := slices.Clone(s)
	slices.Sort(sorted)
	return QA(append(s, '='), append(sorted, '.'))
}
