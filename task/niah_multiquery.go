package task

import "extrapolate/internal/rng"

// NIAHMultiQuery is RULER's multi-query needle in a haystack (Hsieh et al. 2024, "RULER: What's
// the Real Context Size of Your Long-Context Language Models?", NVIDIA/RULER,
// niah_multiquery): needles with distinct keys in the noise filler, all of them asked in one
// question, in a random order, the answer their values in the order asked (see filler.go for
// the format):
//
//	The sky is blue. c=730. The sun is yellow. w=418. ?wc=418,730.
//
// RULER hides and asks four needles; to fit a window of 64, two here. The size is the example's
// length in bytes; from the shortest, with no filler, to 48, tested to 4x.
type NIAHMultiQuery struct{}

func init() { Register(NIAHMultiQuery{}) }

func (NIAHMultiQuery) Name() string { return "niah_multiquery" }
func (NIAHMultiQuery) Source() string {
	return "Hsieh et al. 2024, RULER: What's the Real Context Size of Your Long-Context Language Models? (NVIDIA/RULER): niah_multiquery"
}

const (
	niahMultiQueryNeedles = 2
	// niahMultiQueryMin is an example with no filler: the needles, the question and the answer.
	niahMultiQueryMin = niahMultiQueryNeedles*(needleLen+len("k")+valueLen+len(",")) + len("?=")
)

func (NIAHMultiQuery) Sizes() Sizes {
	return Sizes{Min: niahMultiQueryMin, Max: 48, Test: []int{48, 96, 144, 192}}
}

// MaxLen is the size: every example is exactly that long.
func (NIAHMultiQuery) MaxLen(size int) int { return size }

func (NIAHMultiQuery) Generate(g *rng.SplitMix64, size int) Example {
	keys := distinct(g, lower, niahMultiQueryNeedles)
	vs := distinctMagic(g, niahMultiQueryNeedles)
	var needles [][][]byte // each its own group, so they fall in any order, not the one asked
	for i, k := range keys {
		needles = append(needles, [][]byte{needle(k, vs[i])})
	}
	return needleExample(g, size, ask(keys...), valueList(vs...), needles...)
}
