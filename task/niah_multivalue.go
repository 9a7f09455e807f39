package task

import "extrapolate/internal/rng"

// NIAHMultiValue is RULER's multi-value needle in a haystack (Hsieh et al. 2024, "RULER: What's
// the Real Context Size of Your Long-Context Language Models?", NVIDIA/RULER,
// niah_multivalue): needles stating one key with several values in the noise filler; the
// question asks the key and the answer is every value, in the order they appear (see filler.go
// for the format):
//
//	w=418. The sky is blue. w=265. The sun is yellow. w=730. ?w=418,265,730.
//
// RULER states four values, and scores an answer that has them all, in any order; to fit a
// window of 64, three here, and the order they appear in makes the answer one string. The size
// is the example's length in bytes; from the shortest, with no filler, to 48, tested to 4x.
type NIAHMultiValue struct{}

func init() { Register(NIAHMultiValue{}) }

func (NIAHMultiValue) Name() string { return "niah_multivalue" }
func (NIAHMultiValue) Source() string {
	return "Hsieh et al. 2024, RULER: What's the Real Context Size of Your Long-Context Language Models? (NVIDIA/RULER): niah_multivalue"
}

const (
	niahMultiValueNeedles = 3
	// niahMultiValueMin is an example with no filler: the needles, the question and the answer.
	niahMultiValueMin = niahMultiValueNeedles*needleLen + len("?k=") + niahMultiValueNeedles*(valueLen+len(","))
)

func (NIAHMultiValue) Sizes() Sizes {
	return Sizes{Min: niahMultiValueMin, Max: 48, Test: []int{48, 96, 144, 192}}
}

// MaxLen is the size: every example is exactly that long.
func (NIAHMultiValue) MaxLen(size int) int { return size }

func (NIAHMultiValue) Generate(g *rng.SplitMix64, size int) Example {
	k := lower[uniform(g, len(lower))]
	vs := distinctMagic(g, niahMultiValueNeedles)
	var needles [][]byte // one group, so they appear in this order
	for _, v := range vs {
		needles = append(needles, needle(k, v))
	}
	return needleExample(g, size, ask(k), valueList(vs...), needles)
}
