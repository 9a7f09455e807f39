package task

import (
	"fmt"
	"testing"
)

func TestNIAHSingle(t *testing.T) {
	depths := map[int]bool{} // where the needle is at the largest size
	checkBuiltin(t, "niah_single", func(size int, e Example) error {
		stmts, question, answer, err := parseNeedles(size, e)
		if err != nil {
			return err
		}
		if len(stmts) != 1 || question != stmts[0].key {
			return fmt.Errorf("needles %v asked %q, want one, asked", stmts, question)
		}
		if size == 192 {
			depths[stmts[0].at] = true
		}
		return wantAnswer(answer, stmts[0].value+".")
	})
	// The largest filler has some 9 sentences, all of them starting one with a needle.
	if len(depths) < 8 {
		t.Errorf("needles at only %d depths", len(depths))
	}
}
