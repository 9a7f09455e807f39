package data

import (
	"fmt"
	"math"

	"extrapolate/internal/rng"
)

// Passkey retrieval (Mohtashami and Jaggi 2023, then the position-interpolation and YaRN papers),
// made compact enough for a byte-level model trained at 64 tokens: a document is filler text, a
// needle stating a random 5-digit key at a chosen depth, more filler, and a question after
// which the key must follow:
//
//	<filler>key@12345.<filler>key@12345
//
// As in the original, where the prompt ends "What is the pass key? The pass key is", the
// question repeats the words that introduced the key, so that retrieving it means finding them
// far back and copying what followed (what an induction head does). The @ is rare in Go source
// (16 per MB), so the question points at one place in the window, not at every "=" or " ". A
// document of n tokens is n+1 bytes, so that as a window its targets end with the five digits:
// the model sees the question and must predict the key, digit by digit.
const (
	PasskeyDigits   = 5
	passkeyNeedle   = "key@%05d."
	passkeyQuestion = "key@"
	// PasskeyOverhead is the bytes of a document that are not filler: needle, question, answer.
	PasskeyOverhead = len("key@00000.") + len(passkeyQuestion) + PasskeyDigits
	// PasskeyMinLen is the shortest window that holds a document with some filler.
	PasskeyMinLen = 2 * PasskeyOverhead
	passkeyKeys   = 100000
)

// PasskeyChance is the accuracy of guessing: all five digits right by chance.
var PasskeyChance = math.Pow(10, -PasskeyDigits)

// HeldOutKey reports whether a key is kept for evaluation: training never states one, so a
// model that retrieves held-out keys copies them rather than remembering them. About one key in
// ten is held out, chosen by a hash so that every digit occurs in both sets.
func HeldOutKey(key int) bool {
	h := rng.SplitMix64{State: uint64(key)}
	return h.Next()%10 == 0
}

// PasskeyDoc writes a document of len(dst) bytes into dst: the filler (len(dst)-PasskeyOverhead
// bytes of text) with the needle stating key inserted after a fraction depth of it, then the
// question and the key.
func PasskeyDoc(dst, filler []byte, key int, depth float64) error {
	fill := len(dst) - PasskeyOverhead
	switch {
	case fill < 0 || len(filler) < fill:
		return fmt.Errorf("data: a passkey document of %d bytes needs %d bytes of filler, have %d", len(dst), fill, len(filler))
	case key < 0 || key >= passkeyKeys:
		return fmt.Errorf("data: passkey %d is not a 5-digit key", key)
	case !(depth >= 0 && depth <= 1):
		return fmt.Errorf("data: passkey depth %v outside [0, 1]", depth)
	}
	before := int(math.Round(depth * float64(fill)))
	d := dst[:0]
	d = append(d, filler[:before]...)
	d = fmt.Appendf(d, passkeyNeedle, key)
	d = append(d, filler[before:fill]...)
	d = append(d, passkeyQuestion...)
	d = fmt.Appendf(d, "%05d", key)
	if len(d) != len(dst) {
		return fmt.Errorf("data: passkey document of %d bytes, want %d", len(d), len(dst))
	}
	return nil
}

// passkeyDoc draws a training document of n+1 bytes from the generator: a key that is not held
// out, a depth uniform in [0, 1] and filler from a random offset of text.
func passkeyDoc(dst, text []byte, g *rng.SplitMix64) error {
	key := int(g.Next() % passkeyKeys)
	for HeldOutKey(key) {
		key = int(g.Next() % passkeyKeys)
	}
	depth := g.Float64()
	fill := len(dst) - PasskeyOverhead
	if len(text) <= fill {
		return fmt.Errorf("data: %d training tokens are too few for passkey filler of %d", len(text), fill)
	}
	off := int(g.Next() % uint64(len(text)-fill))
	return PasskeyDoc(dst, text[off:off+fill], key, depth)
}

// PasskeyCase is one evaluation document and what it tests.
type PasskeyCase struct {
	Depth float64
	Key   int
	Doc   []byte // n+1 bytes: the window's tokens and, shifted by one, its targets
}

// passkeySeed fixes the evaluation documents: every run, scheme and seed is tested on the same
// keys and filler.
const passkeySeed = 0x9a55_4e7

// PasskeyCases returns docs documents of n+1 bytes for each depth, depth by depth: held-out keys,
// filler from valid (the validation text, never trained on), the same for every call with the
// same arguments.
func PasskeyCases(valid []byte, n int, depths []float64, docs int) ([]PasskeyCase, error) {
	fill := n + 1 - PasskeyOverhead
	if n < PasskeyMinLen {
		return nil, fmt.Errorf("data: passkey documents need windows of at least %d tokens, not %d", PasskeyMinLen, n)
	}
	if len(valid) <= fill {
		return nil, fmt.Errorf("data: the validation text has %d tokens, too few for passkey filler of %d", len(valid), fill)
	}
	g := rng.SplitMix64{State: passkeySeed ^ uint64(n)}
	var out []PasskeyCase
	for _, depth := range depths {
		for range docs {
			key := int(g.Next() % passkeyKeys)
			for !HeldOutKey(key) {
				key = int(g.Next() % passkeyKeys)
			}
			off := int(g.Next() % uint64(len(valid)-fill))
			doc := make([]byte, n+1)
			if err := PasskeyDoc(doc, valid[off:off+fill], key, depth); err != nil {
				return nil, err
			}
			out = append(out, PasskeyCase{Depth: depth, Key: key, Doc: doc})
		}
	}
	return out, nil
}
