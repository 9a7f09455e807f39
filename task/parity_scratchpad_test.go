package task

import (
	"fmt"
	"strings"
	"testing"
)

// TestParityScratchpad checks each step against the count of ones in the prompt's prefix, a
// computation of the test's own, and the last step against parity's answer on the same bits.
func TestParityScratchpad(t *testing.T) {
	checkBuiltin(t, "parity_scratchpad", func(size int, e Example) error {
		prompt, answer, err := splitQA(e)
		if err != nil {
			return err
		}
		bits, err := bitsPrompt(prompt, size)
		if err != nil {
			return err
		}
		var want strings.Builder
		for i := range bits {
			fmt.Fprint(&want, strings.Count(bits[:i+1], "1")%2)
		}
		want.WriteByte('.')
		return wantAnswer(answer, want.String())
	})
}
