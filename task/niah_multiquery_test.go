package task

import (
	"fmt"
	"strings"
	"testing"
)

func TestNIAHMultiQuery(t *testing.T) {
	inOrder, all := 0, 0 // examples, and those asking the keys in the order their needles appear
	checkBuiltin(t, "niah_multiquery", func(size int, e Example) error {
		stmts, question, answer, err := parseNeedles(size, e)
		if err != nil {
			return err
		}
		value := map[string]string{}
		order := ""
		for _, s := range stmts {
			value[s.key] = s.value
			order += s.key
		}
		if len(stmts) != 2 || len(value) != 2 || len(question) != 2 {
			return fmt.Errorf("needles %v asked %q, want two with distinct keys, both asked", stmts, question)
		}
		all++
		if question == order {
			inOrder++
		}
		var vs []string
		for _, k := range question {
			v, ok := value[string(k)]
			if !ok {
				return fmt.Errorf("asks %c, in no needle of %v", k, stmts)
			}
			vs = append(vs, v)
		}
		return wantAnswer(answer, strings.Join(vs, ",")+".")
	})
	// The question's order is random, the needles' independent of it.
	if n := inOrder * 100 / all; n < 45 || n > 55 {
		t.Errorf("%d%% of the questions ask in the needles' order, want about half", n)
	}
}
