package task

import (
	"slices"
	"strconv"

	"extrapolate/internal/rng"
)

// Counting is the counting task of CoPE (Golovneva et al. 2024, "Contextual Position Encoding:
// Learning to Count What's Important", facebookresearch/RAM, projects/cope/scripts/
// count_data_gen.py): a program of statements on a few variables, and the question how much
// one of them holds, which is how many times it was incremented since it was last set to 0.
// The source writes "a = 0 ;", "a ++;", "pass;" and asks "print a" for the answer; here, in
// bytes, a statement is "a0" (set a to 0), "a+" (increment a) or "_" (pass), and the question
// "?a=":
//
//	a0_a+b0_a+b+?a=2.
//
// The size is the number of statements. As in the source, the variables are the first three
// letters, and each statement is drawn by weights, set 1 and increment 7, a set going to any
// variable and an increment to one already set, both drawn uniformly; a draw that would
// increment a variable past 10, or finds none set, is drawn again. The question asks a variable
// already set, drawn uniformly, and a program that sets none is drawn again. The source's
// programs are 3 to 512 statements, with pass weighing 50; fitting a window of 64, here they
// are 3 to 24, tested to 4x, and pass weighs 8, so that a program holds about as many sets and
// increments as the source's do: 2 sets and 7 increments at 24 statements and 7 and 33 at 96,
// against 5 and 23 on average in the source's. Passes are a byte and the others two, so that
// counting statements is not counting bytes, as it is not counting the source's tokens.
type Counting struct{}

func init() { Register(Counting{}) }

func (Counting) Name() string { return "counting" }
func (Counting) Source() string {
	return "Golovneva et al. 2024, Contextual Position Encoding: Learning to Count What's Important (facebookresearch/RAM, projects/cope/scripts/count_data_gen.py): counting"
}
func (Counting) Sizes() Sizes { return Sizes{Min: 3, Max: 24, Test: []int{12, 24, 48, 72, 96}} }

// MaxLen is two bytes a statement, the question "?a=" and an answer of up to "10.".
func (Counting) MaxLen(size int) int { return 2*size + len("?a=") + len("10.") }

const (
	countVars = 3  // the source's default --nvars
	countMax  = 10 // the source's MAX_VAL: no variable counts past it
	// The source's OP_WEIGHTS, but for pass (see Counting).
	countSet, countPass, countInc = 1, 8, 7
)

func (Counting) Generate(g *rng.SplitMix64, size int) Example {
	for {
		if e, ok := countProgram(g, size); ok {
			return e
		}
	}
}

// countProgram draws a program of n statements and its question, or reports that it set no
// variable to ask about.
func countProgram(g *rng.SplitMix64, n int) (Example, bool) {
	var (
		value [countVars]int
		set   []int // the variables set, in the order first set
		text  = make([]byte, 0, 2*n+len("?a="))
	)
	for range n {
		for {
			p := uniform(g, countSet+countPass+countInc)
			if p < countSet {
				v := uniform(g, countVars)
				if !slices.Contains(set, v) {
					set = append(set, v)
				}
				value[v] = 0
				text = append(text, 'a'+byte(v), '0')
				break
			}
			if p < countSet+countPass {
				text = append(text, '_')
				break
			}
			if len(set) == 0 {
				continue
			}
			v := set[uniform(g, len(set))]
			if value[v]+1 > countMax {
				continue
			}
			value[v]++
			text = append(text, 'a'+byte(v), '+')
			break
		}
	}
	if len(set) == 0 {
		return Example{}, false
	}
	v := set[uniform(g, len(set))]
	text = append(text, '?', 'a'+byte(v), '=')
	return QA(text, append(strconv.AppendInt(nil, int64(value[v]), 10), '.')), true
}
