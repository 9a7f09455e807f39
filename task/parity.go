package task

import "extrapolate/internal/rng"

// Parity is the parity of a bit string: "01101=1.", the answer 1 when the string has an odd
// number of ones, the size being the string's length. The parity task of Kazemnejad et al. 2023
// ("The Impact of Positional Encoding on Length Generalization in Transformers",
// McGill-NLP/length-generalization), after Anil et al. 2022, without a scratchpad: the answer is
// one bit, which depends on every bit of the prompt. On 1 to 32 bits, tested to 4x; the shortest
// sizes have few distinct strings (see HeldOut).
type Parity struct{}

func init() { Register(Parity{}) }

func (Parity) Name() string { return "parity" }
func (Parity) Source() string {
	return "Kazemnejad et al. 2023, The Impact of Positional Encoding on Length Generalization in Transformers (McGill-NLP/length-generalization): parity"
}
func (Parity) Sizes() Sizes { return Sizes{Min: 1, Max: 32, Test: []int{16, 32, 64, 96, 128}} }

// MaxLen is the bits, "=", the parity bit and ".".
func (Parity) MaxLen(size int) int { return size + 3 }

func (Parity) Generate(g *rng.SplitMix64, size int) Example {
	bits := make([]byte, size, size+1)
	odd := byte(0)
	for i := range bits {
		b := byte(g.Next() & 1)
		bits[i] = '0' + b
		odd ^= b
	}
	return QA(append(bits, '='), []byte{'0' + odd, '.'})
}
