package task

import (
	"fmt"
	"testing"
)

func TestVarTrack(t *testing.T) {
	askedFirst, all := 0, 0 // examples, and those whose asked chain starts before the other
	checkBuiltin(t, "vartrack", func(size int, e Example) error {
		stmts, question, answer, err := parseNeedles(size, e)
		if err != nil {
			return err
		}
		all++
		value := map[string]string{} // what each variable holds, followed through the chains
		refs := map[string]bool{}    // the variables assigned to another
		numbers := 0
		holders := ""
		for _, s := range stmts {
			if _, ok := value[s.key]; ok {
				return fmt.Errorf("%s assigned twice", s.key)
			}
			v := s.value
			if v[0] >= 'a' {
				if refs[v] {
					return fmt.Errorf("%s assigned to two variables: not a chain", v)
				}
				refs[v] = true
				var ok bool
				if v, ok = value[s.value]; !ok {
					return fmt.Errorf("%s=%s before %s is assigned", s.key, s.value, s.value)
				}
			} else {
				if numbers == 0 && v == question {
					askedFirst++
				}
				numbers++
			}
			value[s.key] = v
			if v == question {
				holders += s.key
			}
		}
		if len(stmts) != 6 || numbers != 2 || len(holders) != 3 {
			return fmt.Errorf("statements %v, asked %s: want two chains of two hops, one asked", stmts, question)
		}
		return wantAnswer(answer, holders+".")
	})
	if n := askedFirst * 100 / all; n < 45 || n > 55 {
		t.Errorf("%d%% of the examples start with the asked chain, want about half", n)
	}
}
