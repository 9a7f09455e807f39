package task

import (
	"bytes"
	"cmp"
	"slices"
	"strconv"

	"extrapolate/internal/rng"
)

// The needle-in-a-haystack tasks of RULER (Hsieh et al. 2024, "RULER: What's the Real Context
// Size of Your Long-Context Language Models?", NVIDIA/RULER) hide statements, the needles, in
// filler text and ask about them. RULER's needle is "One of the special magic numbers for {key}
// is: {value}." and its question "What are all the special magic numbers for {key} mentioned in
// the provided text?"; made compact enough for a window of 64 bytes, a needle here is a
// sentence "k=123. " (a letter key, a 3-digit value), the question "?k=" and the answer the
// values asked, joined by commas, then ".": "...blue. k=123. The sun...?k=123.". An example's
// size is its whole length in bytes, the budget its filler fills, so that a size is a context
// length, as RULER's are.

// noise is RULER's noise haystack, the sentences of Mohtashami and Jaggi 2023's passkey
// retrieval, each followed by a space, as the filler repeats them.
const noise = "The grass is green. The sky is blue. The sun is yellow. Here we go. There and back again. "

// noiseStarts are the offsets in noise at which its sentences start.
var noiseStarts = sentenceStarts([]byte(noise))

// sentenceStarts are the places in filler at which a sentence starts: the start, and every
// place after a ". ".
func sentenceStarts(filler []byte) []int {
	at := []int{0}
	for i := 2; i < len(filler); i++ {
		if filler[i-2] == '.' && filler[i-1] == ' ' {
			at = append(at, i)
		}
	}
	return at
}

// haystack is n bytes of filler with the statements of groups put in it, each at one of the
// filler's sentence starts, drawn uniformly, each group's statements in their order. Several
// falling at one start follow one another, the groups in a random order, so that the order in
// which they are given says nothing of the order in which they appear. The filler is the noise
// repeated from one of its sentences, drawn uniformly: RULER's always starts with the first,
// but a model trained only on short examples would then never see the others before the test
// sizes, which would test new text, not only new lengths.
func haystack(g *rng.SplitMix64, n int, groups ...[][]byte) []byte {
	fill := make([]byte, n)
	first := noiseStarts[uniform(g, len(noiseStarts))]
	for i := range fill {
		fill[i] = noise[(first+i)%len(noise)]
	}
	starts := sentenceStarts(fill)
	type placed struct {
		at   int
		text []byte
	}
	var all []placed
	total := n
	groups = slices.Clone(groups)
	shuffle(g, groups) // for the order at a shared start, which the stable sort keeps
	for _, group := range groups {
		at := make([]int, len(group))
		for i := range at {
			at[i] = starts[uniform(g, len(starts))]
		}
		slices.Sort(at)
		for i, s := range group {
			all = append(all, placed{at[i], s})
			total += len(s)
		}
	}
	slices.SortStableFunc(all, func(a, b placed) int { return cmp.Compare(a.at, b.at) })
	out := make([]byte, 0, total)
	prev := 0
	for _, p := range all {
		out = append(append(out, fill[prev:p.at]...), p.text...)
		prev = p.at
	}
	return append(out, fill[prev:]...)
}

// needle is the statement that key holds value: "k=123. ".
func needle(key byte, value []byte) []byte {
	return append(append([]byte{key, '='}, value...), '.', ' ')
}

// Lengths of a needle's parts.
const (
	valueLen  = len("123")
	needleLen = len("k=123. ")
)

// magic draws a needle's value, 3 digits from 100 to 999: RULER's are 7 digits, from 10^6, so
// that none starts with 0.
func magic(g *rng.SplitMix64) []byte {
	v := 100 + uniform(g, 900)
	return []byte{'0' + byte(v/100), '0' + byte(v/10%10), '0' + byte(v%10)}
}

// distinctMagic draws n distinct values.
func distinctMagic(g *rng.SplitMix64, n int) [][]byte {
	var vs [][]byte
	for len(vs) < n {
		v := magic(g)
		if !slices.ContainsFunc(vs, func(w []byte) bool { return string(w) == string(v) }) {
			vs = append(vs, v)
		}
	}
	return vs
}

// needleExample is the example of size bytes that hides the needles of groups (see haystack),
// then asks question, whose answer is answer and ".".
func needleExample(g *rng.SplitMix64, size int, question, answer []byte, groups ...[][]byte) Example {
	answer = append(slices.Clip(answer), '.')
	n := size - len(question) - len(answer)
	for _, group := range groups {
		for _, s := range group {
			n -= len(s)
		}
	}
	if n < 0 {
		panic("task: a needle example of " + strconv.Itoa(size) + " bytes cannot hold its needles")
	}
	return QA(append(haystack(g, n, groups...), question...), answer)
}

// valueList is the answer of several values: them, joined by commas.
func valueList(vs ...[]byte) []byte { return bytes.Join(vs, []byte{','}) }

// ask is the question that asks the values of keys: "?k=".
func ask(keys ...byte) []byte { return append(append([]byte{'?'}, keys...), '=') }
