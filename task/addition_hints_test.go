package task

import (
	"fmt"
	"math/big"
	"regexp"
	"strings"
	"testing"
)

var hintedPrompt = regexp.MustCompile(`^([a-zA-Z0-9]+)\+([a-zA-Z0-9]+)=$`)

// unhint checks that s is each digit after its place's letter (a, b, …, z, A, …) and returns
// the digits.
func unhint(s string) (string, error) {
	const letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	if len(s)%2 != 0 || len(s)/2 > len(letters) {
		return "", fmt.Errorf("%q: want letter-digit pairs", s)
	}
	var digits strings.Builder
	for i := 0; i < len(s); i += 2 {
		if s[i] != letters[i/2] || s[i+1] < '0' || s[i+1] > '9' {
			return "", fmt.Errorf("%q: place %d is %q, want %c and a digit", s, i/2, s[i:i+2], letters[i/2])
		}
		digits.WriteByte(s[i+1])
	}
	return digits.String(), nil
}

// TestAdditionHints checks the sum with math/big on the operands read back through their hints.
func TestAdditionHints(t *testing.T) {
	checkBuiltin(t, "addition_hints", func(size int, e Example) error {
		prompt, answer, err := splitQA(e)
		if err != nil {
			return err
		}
		m := hintedPrompt.FindStringSubmatch(string(prompt))
		if m == nil {
			return fmt.Errorf("prompt %q, want A+B=", prompt)
		}
		var sum big.Int
		for _, op := range m[1:] {
			digits, err := unhint(op)
			if err != nil {
				return err
			}
			if len(digits) != size || digits[size-1] == '0' {
				return fmt.Errorf("operand %q, want %d digits, the last not 0", op, size)
			}
			n, _ := new(big.Int).SetString(reversed(digits), 10)
			sum.Add(&sum, n)
		}
		body, ok := strings.CutSuffix(string(answer), ".")
		if !ok {
			return fmt.Errorf("answer %q, want it to end in .", answer)
		}
		got, err := unhint(body)
		if err != nil {
			return err
		}
		return wantAnswer([]byte(got), reversed(sum.String()))
	})
}
