package task

import (
	"fmt"
	"sort"
	"strings"
	"testing"
)

func TestSorting(t *testing.T) {
	checkBuiltin(t, "sorting", func(size int, e Example) error {
		prompt, answer, err := splitQA(e)
		if err != nil {
			return err
		}
		s, ok := strings.CutSuffix(string(prompt), "=")
		if !ok || len(s) != size || strings.Trim(s, lower) != "" {
			return fmt.Errorf("prompt %q, want %d letters and =", prompt, size)
		}
		b := []byte(s)
		sort.Slice(b, func(i, j int) bool { return b[i] < b[j] })
		return wantAnswer(answer, string(b)+".")
	})
}
