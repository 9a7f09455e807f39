package task

import "extrapolate/internal/rng"

// NIAHMultiKey is RULER's multi-key needle in a haystack (Hsieh et al. 2024, "RULER: What's the
// Real Context Size of Your Long-Context Language Models?", NVIDIA/RULER, niah_multikey):
// needles with distinct keys in the noise filler, one of them asked, the others distractors
// (see filler.go for the format):
//
//	c=730. The grass is green. w=418. p=265. The sky is?w=418.
//
// RULER hides four needles; to fit a window of 64, three here. The size is the example's length
// in bytes; from the shortest, with no filler, to 48, tested to 4x.
type NIAHMultiKey struct{}

func init() { Register(NIAHMultiKey{}) }

func (NIAHMultiKey) Name() string { return "niah_multikey" }
func (NIAHMultiKey) Source() string {
	return "Hsieh et al. 2024, RULER: What's the Real Context Size of Your Long-Context Language Models? (NVIDIA/RULER): niah_multikey"
}

const (
	niahMultiKeyNeedles = 3
	// niahMultiKeyMin is an example with no filler: the needles, the question and the answer.
	niahMultiKeyMin = niahMultiKeyNeedles*needleLen + len("?k=") + valueLen + len(".")
)

func (NIAHMultiKey) Sizes() Sizes {
	return Sizes{Min: niahMultiKeyMin, Max: 48, Test: []int{48, 96, 144, 192}}
}

// MaxLen is the size: every example is exactly that long.
func (NIAHMultiKey) MaxLen(size int) int { return size }

func (NIAHMultiKey) Generate(g *rng.SplitMix64, size int) Example {
	keys := distinct(g, lower, niahMultiKeyNeedles)
	vs := distinctMagic(g, niahMultiKeyNeedles)
	var needles [][][]byte // each its own group, so they fall in any order
	for i, k := range keys {
		needles = append(needles, [][]byte{needle(k, vs[i])})
	}
	return needleExample(g, size, ask(keys[0]), vs[0], needles...)
}
