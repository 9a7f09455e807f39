package task

import (
	"fmt"
	"math"
	"testing"
)

func TestNIAHMultiKey(t *testing.T) {
	var rank [3]int // how often the asked needle is the first, second and third
	checkBuiltin(t, "niah_multikey", func(size int, e Example) error {
		stmts, question, answer, err := parseNeedles(size, e)
		if err != nil {
			return err
		}
		value := map[string]string{}
		for _, s := range stmts {
			value[s.key] = s.value
		}
		v, ok := value[question]
		if len(stmts) != 3 || len(value) != 3 || !ok {
			return fmt.Errorf("needles %v asked %q, want three with distinct keys, one asked", stmts, question)
		}
		for i, s := range stmts {
			if s.key == question {
				rank[i]++
			}
		}
		return wantAnswer(answer, v+".")
	})
	all := rank[0] + rank[1] + rank[2]
	for i, n := range rank {
		// Within 5 standard errors of a third: a wider gap is a bias, not chance.
		if got := float64(n) / float64(all); math.Abs(got-1.0/3) > 5*math.Sqrt(2.0/9/float64(all)) {
			t.Errorf("the asked needle is number %d in %.3f of the examples, want a third", i+1, got)
		}
	}
}
