package task

import "extrapolate/internal/rng"

// FlipFlop is flip-flop language modelling (Liu et al. 2023, "Exposing Attention Glitches with
// Flip-Flop Language Modeling"): a program of instructions, each an op byte and a bit, where w
// writes its bit, r reads one, which must be the bit last written, and i ignores its bit:
//
//	w1i0i1r1i0w0i1r0
//
// The size is the number of instructions. As in FFL, the first instruction writes and the last
// reads, and those between are drawn independently, ignore with p_i = 0.8 and write and read
// with 0.1 each: FFL(0.8), the sparse setting, in which a read must look back past many ignores,
// whose bits are distractors. Every read's bit is an answer byte; the other bits are random and
// not. FFL's sequences are 512 tokens (256 instructions); here 2 to 28 instructions, a window of
// 64, tested to 4x.
type FlipFlop struct{}

func init() { Register(FlipFlop{}) }

func (FlipFlop) Name() string { return "flipflop" }
func (FlipFlop) Source() string {
	return "Liu et al. 2023, Exposing Attention Glitches with Flip-Flop Language Modeling: FFL(p_i=0.8)"
}
func (FlipFlop) Sizes() Sizes { return Sizes{Min: 2, Max: 28, Test: []int{14, 28, 56, 84, 112}} }

// MaxLen is two bytes an instruction.
func (FlipFlop) MaxLen(size int) int { return 2 * size }

// The probabilities of an instruction between the first and the last, in percent.
const (
	flipFlopIgnore = 80
	flipFlopWrite  = 10 // and read the remaining 10
)

func (FlipFlop) Generate(g *rng.SplitMix64, size int) Example {
	e := Example{Text: make([]byte, 0, 2*size), Answer: make([]bool, 0, 2*size)}
	var last byte // the bit last written; the first instruction writes
	for i := range size {
		op := byte('w')
		switch p := uniform(g, 100); {
		case i == 0:
		case i == size-1:
			op = 'r'
		case p < flipFlopIgnore:
			op = 'i'
		case p >= flipFlopIgnore+flipFlopWrite:
			op = 'r'
		}
		bit := '0' + byte(g.Next()&1)
		switch op {
		case 'w':
			last = bit
		case 'r':
			bit = last
		}
		e.Text = append(e.Text, op, bit)
		e.Answer = append(e.Answer, false, op == 'r')
	}
	return e
}
