package task

import (
	"fmt"
	"math/big"
	"regexp"
	"slices"
	"testing"
)

var additionPrompt = regexp.MustCompile(`^([0-9]+)\+([0-9]+)=$`)

// reversed is s backwards.
func reversed(s string) string {
	b := []byte(s)
	slices.Reverse(b)
	return string(b)
}

func TestAddition(t *testing.T) {
	carries := 0 // sums one digit longer than the operands
	checkBuiltin(t, "addition", func(size int, e Example) error {
		prompt, answer, err := splitQA(e)
		if err != nil {
			return err
		}
		m := additionPrompt.FindStringSubmatch(string(prompt))
		if m == nil {
			return fmt.Errorf("prompt %q, want A+B=", prompt)
		}
		var sum big.Int
		for _, op := range m[1:] {
			if len(op) != size || op[size-1] == '0' {
				return fmt.Errorf("operand %q, want %d digits, the last not 0", op, size)
			}
			n, ok := new(big.Int).SetString(reversed(op), 10)
			if !ok {
				return fmt.Errorf("operand %q", op)
			}
			sum.Add(&sum, n)
		}
		want := reversed(sum.String())
		if len(want) > size {
			carries++
		}
		return wantAnswer(answer, want+".")
	})
	if carries == 0 {
		t.Error("no sum carried into a new digit")
	}
}
