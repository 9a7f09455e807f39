package task

import "extrapolate/internal/rng"

// The tasks draw everything from the one generator they are given, so that an example is a
// function of the generator's state: the same seed gives the same training stream and the same
// evaluation set (Cases) on every run.

// uniform draws an int in [0, n), n > 0. The modulo's bias, below n/2^64, is far below anything
// a task's statistics could show.
func uniform(g *rng.SplitMix64, n int) int { return int(g.Next() % uint64(n)) }

// shuffle permutes s uniformly (Fisher and Yates).
func shuffle[E any](g *rng.SplitMix64, s []E) {
	for i := len(s) - 1; i > 0; i-- {
		j := uniform(g, i+1)
		s[i], s[j] = s[j], s[i]
	}
}

// distinct draws n distinct bytes of alphabet, n <= len(alphabet), in random order.
func distinct(g *rng.SplitMix64, alphabet string, n int) []byte {
	s := []byte(alphabet)
	for i := range n {
		j := i + uniform(g, len(s)-i)
		s[i], s[j] = s[j], s[i]
	}
	return s[:n]
}

// lower, upper and letters are the alphabets keys, values and variables are drawn from.
const (
	lower   = "abcdefghijklmnopqrstuvwxyz"
	upper   = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	letters = lower + upper
)
