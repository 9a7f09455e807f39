package measure

import (
	"strings"
	"testing"
)

// TestRatio checks how a length is written as a multiple of the training length: whole and
// simple multiples as %g writes them, as every committed report has them, and a task window's
// odd ratio in three digits.
func TestRatio(t *testing.T) {
	for _, c := range []struct {
		n, trainLen int
		want        string
	}{
		{64, 64, "1x"}, {1024, 64, "16x"}, {32, 64, "0.5x"}, {96, 64, "1.5x"}, {4096, 64, "64x"},
		{32, 38, "0.842x"}, {65536, 64, "1024x"}, {100000, 64, "1562x"},
	} {
		if got := Ratio(c.n, c.trainLen); got != c.want {
			t.Errorf("Ratio(%d, %d) = %s, want %s", c.n, c.trainLen, got, c.want)
		}
	}
}

// TestPanelsNote checks that the report says the panels of a figure share their y range, so
// that a reader compares levels across panels.
func TestPanelsNote(t *testing.T) {
	if got := (&Report{}).PanelsNote(); !strings.Contains(got, "every panel on one y range") {
		t.Errorf("PanelsNote: %q", got)
	}
}

// TestLengthSpread checks the effective lengths' cells: a range over the seeds that have one,
// one value when they agree, and a dash for a seed without.
func TestLengthSpread(t *testing.T) {
	for _, c := range []struct {
		lengths    []int
		span, each string
	}{
		{[]int{128, 128, 128}, "2x", "2x, 2x, 2x"},
		{[]int{64, 512, 128}, "1x to 8x", "1x, 8x, 2x"},
		{[]int{0, 256, 0}, "4x", "–, 4x, –"},
		{[]int{0, 0}, "–", "–, –"},
		{nil, "–", ""},
	} {
		span, each := LengthSpread(c.lengths, 64)
		if span != c.span || each != c.each {
			t.Errorf("%v: %q, %q; want %q, %q", c.lengths, span, each, c.span, c.each)
		}
	}
}
