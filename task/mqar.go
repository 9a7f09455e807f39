package task

import "extrapolate/internal/rng"

// MQAR is multi-query associative recall (Arora et al. 2023, "Zoology: Measuring and Improving
// Recall in Efficient Language Models", HazyResearch/zoology, zoology/data/multiquery_ar.py):
// key-value pairs, "=", then every key once more, in a random order, each followed by its
// value, which is the answer:
//
//	a3Q7k1=k1a3Q7
//
// holds the pairs a3, Q7 and k1 and asks k, a and Q. The size is the number of pairs. As in
// Zoology, keys are distinct and drawn from their own alphabet (the 52 letters) and values from
// another (digits), the pairs come first and every key is asked once. Zoology's values are
// distinct too, drawn from thousands of tokens; ten digits cannot be, so they repeat. Its
// queries are spread, by a power law on their place, among random tokens after the pairs, with
// nothing to mark where they start; here they follow one another after the "=", which tells a
// model trained on several tasks where the questions begin. On 1 to 13 pairs, tested to 4x,
// which asks all 52 keys.
type MQAR struct{}

func init() { Register(MQAR{}) }

func (MQAR) Name() string { return "mqar" }
func (MQAR) Source() string {
	return "Arora et al. 2023, Zoology: Measuring and Improving Recall in Efficient Language Models (HazyResearch/zoology, zoology/data/multiquery_ar.py): multi-query associative recall"
}
func (MQAR) Sizes() Sizes { return Sizes{Min: 1, Max: 13, Test: []int{7, 13, 26, 39, 52}} }

// MaxLen is the pairs, "=" and the queries with their values, two bytes each.
func (MQAR) MaxLen(size int) int { return 4*size + 1 }

func (MQAR) Generate(g *rng.SplitMix64, size int) Example {
	keys := distinct(g, letters, size)
	value := map[byte]byte{}
	e := Example{Text: make([]byte, 0, 4*size+1), Answer: make([]bool, 4*size+1)}
	for _, k := range keys {
		value[k] = '0' + byte(uniform(g, 10))
		e.Text = append(e.Text, k, value[k])
	}
	e.Text = append(e.Text, '=')
	shuffle(g, keys)
	for _, k := range keys {
		e.Answer[len(e.Text)+1] = true
		e.Text = append(e.Text, k, value[k])
	}
	return e
}
