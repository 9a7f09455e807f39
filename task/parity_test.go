package task

import (
	"fmt"
	"strings"
	"testing"
)

func TestParity(t *testing.T) {
	checkBuiltin(t, "parity", func(size int, e Example) error {
		prompt, answer, err := splitQA(e)
		if err != nil {
			return err
		}
		bits, err := bitsPrompt(prompt, size)
		if err != nil {
			return err
		}
		return wantAnswer(answer, fmt.Sprintf("%d.", strings.Count(bits, "1")%2))
	})
}

// bitsPrompt is the bits of a parity prompt, "size bits then =", or why it is not one.
func bitsPrompt(prompt []byte, size int) (string, error) {
	bits, ok := strings.CutSuffix(string(prompt), "=")
	if !ok || len(bits) != size || strings.Trim(bits, "01") != "" {
		return "", fmt.Errorf("prompt %q, want %d bits and =", prompt, size)
	}
	return bits, nil
}
