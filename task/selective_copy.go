package task

import "extrapolate/internal/rng"

// SelectiveCopy copies the letters of a string scattered among blanks, in order, leaving the
// blanks out: "q__kz_d_=qkzd.", the size being the number of letters. The selective copy task
// of Gu and Dao 2023 ("Mamba: Linear-Time Sequence Modeling with Selective State Spaces"), as
// CoPE (Golovneva et al. 2024, "Contextual Position Encoding: Learning to Count What's
// Important") trains it: where its i-th answer byte comes from depends on the letters, not on
// position, since the blanks between them vary. CoPE's in-distribution sequences have as many
// blanks as tokens to copy (128 of each; its out-of-distribution ones, dense and sparse, 64 and
// 256 blanks), and so do these: size blanks, the letters at places drawn uniformly among the
// 2*size. Its code
// (facebookresearch/RAM, projects/cope) generates only the counting data, so this follows the
// paper. On 1 to 16 letters, a window of 64, tested to 4x.
type SelectiveCopy struct{}

func init() { Register(SelectiveCopy{}) }

func (SelectiveCopy) Name() string { return "selective_copy" }
func (SelectiveCopy) Source() string {
	return "Gu and Dao 2023, Mamba: Linear-Time Sequence Modeling with Selective State Spaces: selective copying, as in Golovneva et al. 2024, Contextual Position Encoding (CoPE)"
}
func (SelectiveCopy) Sizes() Sizes {
	return Sizes{Min: 1, Max: 16, Test: []int{8, 16, 24, 32, 48, 64}}
}

// MaxLen is the letters and as many blanks, "=", the letters and ".".
func (SelectiveCopy) MaxLen(size int) int { return 3*size + 2 }

// blank is the byte the letters are scattered among.
const blank = '_'

func (SelectiveCopy) Generate(g *rng.SplitMix64, size int) Example {
	s := Letters(g, size)
	letter := make([]bool, 2*size) // which places hold a letter
	for i := range size {
		letter[i] = true
	}
	shuffle(g, letter)
	prompt := make([]byte, 0, 2*size+1)
	next := s
	for _, l := range letter {
		if l {
			prompt, next = append(prompt, next[0]), next[1:]
		} else {
			prompt = append(prompt, blank)
		}
	}
	return QA(append(prompt, '='), append(s, '.'))
}
