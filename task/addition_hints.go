package task

import "extrapolate/internal/rng"

// AdditionHints is addition with index hints: every digit, least significant first as in
// Addition, follows a letter naming its place (a for the units, b for the tens, …, then A to
// Z), in both operands and in the sum: "a4b3+a6b5=a0b9." is 34+56=90. The hints of Zhou et al.
// 2023 ("What Algorithms can Transformers Learn? A Study in Length Generalization"), which turn
// finding the digits to add from counting positions into matching a letter, so that a model
// that looks a place's letter up in each operand adds numbers longer than it trained on. The
// sum's hints are answer bytes too, as a model decoding greedily writes them. On 1 to 7 digits
// (the window of 7 fits 64 bytes), tested to 4x, which the 52 letters name.
type AdditionHints struct{}

func init() { Register(AdditionHints{}) }

// hintLetters name the places, units first.
const hintLetters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"

func (AdditionHints) Name() string { return "addition_hints" }
func (AdditionHints) Source() string {
	return "Zhou et al. 2023, What Algorithms can Transformers Learn? A Study in Length Generalization: addition with index hints; reversed digits as in Lee et al. 2023"
}
func (AdditionHints) Sizes() Sizes { return Sizes{Min: 1, Max: 7, Test: []int{4, 7, 14, 21, 28}} }

// MaxLen is two hinted operands, "+", "=", a hinted sum of size+1 digits and ".".
func (AdditionHints) MaxLen(size int) int { return 6*size + 5 }

func (AdditionHints) Generate(g *rng.SplitMix64, size int) Example {
	a, b := operand(g, size), operand(g, size)
	sum := digitSum(a, b)
	prompt := append(append(append(hinted(a), '+'), hinted(b)...), '=')
	return QA(prompt, append(hinted(sum), '.'))
}

// hinted writes each digit after its place's letter.
func hinted(digits []byte) []byte {
	out := make([]byte, 0, 2*len(digits)+1)
	for i, d := range digits {
		out = append(out, hintLetters[i], d)
	}
	return out
}
