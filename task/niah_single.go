package task

import "extrapolate/internal/rng"

// NIAHSingle is RULER's single needle in a haystack (Hsieh et al. 2024, "RULER: What's the Real
// Context Size of Your Long-Context Language Models?", NVIDIA/RULER, niah_single_1): one
// needle in the noise filler, and the question asks its key (see filler.go for the format):
//
//	The sky is blue. w=418. The sun is yel?w=418.
//
// The size is the example's length in bytes; from the shortest, with no filler, to 48, a window
// of at most 64, tested to 4x.
type NIAHSingle struct{}

func init() { Register(NIAHSingle{}) }

func (NIAHSingle) Name() string { return "niah_single" }
func (NIAHSingle) Source() string {
	return "Hsieh et al. 2024, RULER: What's the Real Context Size of Your Long-Context Language Models? (NVIDIA/RULER): niah_single"
}

// niahSingleMin is an example with no filler: the needle, the question and the answer.
const niahSingleMin = needleLen + len("?k=") + valueLen + len(".")

func (NIAHSingle) Sizes() Sizes {
	return Sizes{Min: niahSingleMin, Max: 48, Test: []int{48, 96, 144, 192}}
}

// MaxLen is the size: every example is exactly that long.
func (NIAHSingle) MaxLen(size int) int { return size }

func (NIAHSingle) Generate(g *rng.SplitMix64, size int) Example {
	k, v := lower[uniform(g, len(lower))], magic(g)
	return needleExample(g, size, ask(k), v, [][]byte{needle(k, v)})
}
