package task

import (
	"fmt"
	"strings"
	"testing"
)

func TestSelectiveCopy(t *testing.T) {
	lettersFirst := 0 // prompts whose letters all come before their blanks
	checkBuiltin(t, "selective_copy", func(size int, e Example) error {
		prompt, answer, err := splitQA(e)
		if err != nil {
			return err
		}
		s, ok := strings.CutSuffix(string(prompt), "=")
		if !ok || len(s) != 2*size || strings.Count(s, "_") != size || strings.Trim(s, lower+"_") != "" {
			return fmt.Errorf("prompt %q, want %d letters among as many blanks, and =", prompt, size)
		}
		if strings.TrimLeft(s, lower) == strings.Repeat("_", size) {
			lettersFirst++
		}
		return wantAnswer(answer, strings.ReplaceAll(s, "_", "")+".")
	})
	// One prompt in C(2n, n) has its letters first: rare but for the smallest sizes.
	if lettersFirst > builtinDraws*4 {
		t.Errorf("%d prompts with the letters first", lettersFirst)
	}
}
