package task

import (
	"fmt"
	"strings"
	"testing"
)

func TestNIAHMultiValue(t *testing.T) {
	checkBuiltin(t, "niah_multivalue", func(size int, e Example) error {
		stmts, question, answer, err := parseNeedles(size, e)
		if err != nil {
			return err
		}
		if len(stmts) != 3 {
			return fmt.Errorf("needles %v, want three", stmts)
		}
		var vs []string
		for _, s := range stmts {
			if s.key != question {
				return fmt.Errorf("needles %v asked %q, want all of one key, asked", stmts, question)
			}
			vs = append(vs, s.value)
		}
		return wantAnswer(answer, strings.Join(vs, ",")+".")
	})
}
