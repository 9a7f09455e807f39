package task

import (
	"fmt"
	"strings"
	"testing"
)

func TestReverse(t *testing.T) {
	checkBuiltin(t, "reverse", func(size int, e Example) error {
		prompt, answer, err := splitQA(e)
		if err != nil {
			return err
		}
		s, ok := strings.CutSuffix(string(prompt), "=")
		if !ok || len(s) != size || strings.Trim(s, lower) != "" {
			return fmt.Errorf("prompt %q, want %d letters and =", prompt, size)
		}
		var r strings.Builder
		for i := len(s) - 1; i >= 0; i-- {
			r.WriteByte(s[i])
		}
		return wantAnswer(answer, r.String()+".")
	})
}
