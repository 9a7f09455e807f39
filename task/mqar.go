package task

import (
	"math"

	"extrapolate/internal/rng"
)

// MQAR is multi-query associative recall in Zoology's layout (Arora et al. 2023, "Zoology:
// Measuring and Improving Recall in Efficient Language Models", HazyResearch/zoology,
// zoology/data/multiquery_ar.py): n key-value pairs, then 14n bytes of noise among which each
// key is asked once, its value the answer:
//
//	pNkApNsnLFkAwzVNEwNOxLcHylvAuFOa
//
// holds the pairs pN and kA and asks p at the first slot and k at the fourth. The size is the
// number of pairs, 16 bytes each, as Zoology's cell of 4 pairs in 64 tokens. As there, keys and
// values are distinct and drawn from their own alphabets (lowercase and uppercase letters), the
// queries sit at even offsets after the pairs, at slots drawn without replacement by a power
// law (power_a 0.01, so most are near the pairs), everything else is noise drawn from the whole
// alphabet, the value after a query is a label the window never shows (Example.Hide), and
// nothing marks where the queries start (no tag). Each of these matters here: with the values
// shown after their queries, a constant tag, or the queries in a row after the pairs, this
// model learned none of it (docs/tasks.md#mqar-in-zoologys-layout). On 1 to 4 pairs, tested to
// 16.
type MQAR struct{}

func init() { Register(MQAR{}) }

func (MQAR) Name() string { return "mqar" }
func (MQAR) Source() string {
	return "Arora et al. 2023, Zoology: Measuring and Improving Recall in Efficient Language Models (HazyResearch/zoology, zoology/data/multiquery_ar.py): multi-query associative recall"
}
func (MQAR) Sizes() Sizes { return Sizes{Min: 1, Max: 4, Test: []int{2, 4, 8, 12, 16}} }

// Tag is none: Zoology's sequences start with the first pair.
func (MQAR) Tag() []byte { return nil }

// mqarPer is the bytes an example takes per pair: Zoology's 64 tokens for 4 pairs.
const mqarPer = 16

// mqarPower is Zoology's power_a, the exponent of the law the queries' slots follow.
const mqarPower = 0.01

// MaxLen is the pairs and the noise that holds the queries, 16 bytes a pair.
func (MQAR) MaxLen(size int) int { return mqarPer * size }

func (MQAR) Generate(g *rng.SplitMix64, size int) Example {
	keys, values := distinct(g, lower, size), distinct(g, upper, size)
	n := mqarPer * size
	e := Example{Text: make([]byte, n), Answer: make([]bool, n), Hide: true}
	for i := range size {
		e.Text[2*i], e.Text[2*i+1] = keys[i], values[i]
	}
	for i := 2 * size; i < n; i++ {
		e.Text[i] = letters[uniform(g, len(letters))]
	}
	for i, slot := range powerSlots(g, (n-2*size)/2, size) {
		at := 2*size + 2*slot
		e.Text[at], e.Text[at+1] = keys[i], values[i]
		e.Answer[at+1] = true
	}
	return e
}

// powerSlots draws n distinct slots of [0, space), the i-th for the i-th key, each with
// probability proportional to a·k^(a−1) at slot k−1 among those not yet drawn, a = mqarPower:
// numpy's choice without replacement, as Zoology draws its gaps.
func powerSlots(g *rng.SplitMix64, space, n int) []int {
	w := make([]float64, space)
	for k := range w {
		w[k] = mqarPower * math.Pow(float64(k+1), mqarPower-1)
	}
	slots := make([]int, 0, n)
	for range n {
		total := 0.0
		for _, x := range w {
			total += x
		}
		r, pick := g.Float64()*total, -1
		for k, x := range w {
			if x == 0 {
				continue
			}
			pick = k // the last slot left, should rounding carry r past the sum
			if r < x {
				break
			}
			r -= x
		}
		slots = append(slots, pick)
		w[pick] = 0
	}
	return slots
}
