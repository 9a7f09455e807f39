package task

import "extrapolate/internal/rng"

// Copy repeats a string of lowercase letters: "qkzd=qkzd.", the size being its length. The copy
// task of Kazemnejad et al. 2023 ("The Impact of Positional Encoding on Length Generalization
// in Transformers", McGill-NLP/length-generalization), which trains on instances up to size 20
// and tests to 40; here, as a byte-level task, on 1 to 16 letters, tested to 4x.
type Copy struct{}

func init() { Register(Copy{}) }

func (Copy) Name() string { return "copy" }
func (Copy) Source() string {
	return "Kazemnejad et al. 2023, The Impact of Positional Encoding on Length Generalization in Transformers (McGill-NLP/length-generalization): copy"
}
func (Copy) Sizes() Sizes { return Sizes{Min: 1, Max: 16, Test: []int{8, 16, 24, 32, 48, 64}} }

// MaxLen is the string, "=", the string again and ".".
func (Copy) MaxLen(size int) int { return 2*size + 2 }

func (Copy) Generate(g *rng.SplitMix64, size int) Example {
	s := Letters(g, size)
	return QA(append(s, '='), append(append([]byte{}, s...), '.'))
}

// Letters draws n lowercase letters, uniformly.
func Letters(g *rng.SplitMix64, n int) []byte {
	s := make([]byte, n)
	for i := range s {
		s[i] = 'a' + byte(g.Next()%26)
	}
	return s
}
