package task

import (
	"slices"

	"extrapolate/internal/rng"
)

// Reverse writes a string of lowercase letters backwards: "qkzd=dzkq.", the size being its
// length. The reverse task of Kazemnejad et al. 2023 ("The Impact of Positional Encoding on
// Length Generalization in Transformers", McGill-NLP/length-generalization); like Copy, on 1 to
// 16 letters, tested to 4x. Unlike copying, each answer byte is at a distance from its source
// that changes along the answer, so a model cannot solve it with one fixed relative offset.
type Reverse struct{}

func init() { Register(Reverse{}) }

func (Reverse) Name() string { return "reverse" }
func (Reverse) Source() string {
	return "Kazemnejad et al. 2023, The Impact of Positional Encoding on Length Generalization in Transformers (McGill-NLP/length-generalization): reverse"
}
func (Reverse) Sizes() Sizes { return Sizes{Min: 1, Max: 16, Test: []int{8, 16, 24, 32, 48, 64}} }

// MaxLen is the string, "=", the string reversed and ".".
func (Reverse) MaxLen(size int) int { return 2*size + 2 }

func (Reverse) Generate(g *rng.SplitMix64, size int) Example {
	s := Letters(g, size)
	r := slices.Clone(s)
	slices.Reverse(r)
	return QA(append(s, '='), append(r, '.'))
}
