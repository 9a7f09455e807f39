package task

import "extrapolate/internal/rng"

// ParityScratchpad is parity with a scratchpad: after the bits and "=", the parity of every
// prefix of them in turn, the last being the answer, then ".": "01101=01001." (the prefixes 0,
// 01, 011, 0110 and 01101 have odd parity 0, 1, 0, 0, 1). Every byte after "=" is answer, so an
// exact match needs every step right, as greedy decoding of the scratchpad would. The parity
// task of Anil et al. 2022 ("Exploring Length Generalization in Large Language Models"), whose
// scratchpad tracks the running parity bit by bit, and of Kazemnejad et al. 2023's scratchpad
// runs: each step is the bit just written XOR the bit at the same place in the prompt, where
// the one-bit answer of parity depends on every bit at once, which models of this size do not
// learn (docs/tasks.md). On 1 to 20 bits, tested to 4x.
type ParityScratchpad struct{}

func init() { Register(ParityScratchpad{}) }

func (ParityScratchpad) Name() string { return "parity_scratchpad" }
func (ParityScratchpad) Source() string {
	return "Anil et al. 2022, Exploring Length Generalization in Large Language Models: parity with a scratchpad of running parities; Kazemnejad et al. 2023 (McGill-NLP/length-generalization)"
}
func (ParityScratchpad) Sizes() Sizes { return Sizes{Min: 1, Max: 20, Test: []int{10, 20, 40, 60, 80}} }

// MaxLen is the bits, "=", a running parity per bit and ".".
func (ParityScratchpad) MaxLen(size int) int { return 2*size + 2 }

func (ParityScratchpad) Generate(g *rng.SplitMix64, size int) Example {
	bits := make([]byte, size, size+1)
	steps := make([]byte, size, size+1)
	odd := byte(0)
	for i := range bits {
		b := byte(g.Next() & 1)
		bits[i] = '0' + b
		odd ^= b
		steps[i] = '0' + odd
	}
	return QA(append(bits, '='), append(steps, '.'))
}
