package tasks

import (
	"strings"
	"testing"
)

// TestEffective checks RULER's effective length in a task's sizes, worked by hand: the largest
// size up to which every size scores at least 85.6%, in any order given, ended by a size that
// falls short or was not scored; and the report's column.
func TestEffective(t *testing.T) {
	at := func(size int, ratio, mean float64, seeds int) Stat {
		return Stat{Label: "rope_copy", Task: "copy", Size: size, Ratio: ratio, Mean: mean, Seeds: seeds}
	}
	for _, c := range []struct {
		name  string
		stats []Stat
		want  int
		ok    bool
	}{
		{"holds to 1.5x", []Stat{at(32, 2, 0.1, 3), at(8, 0.5, 1, 3), at(24, 1.5, 0.86, 3), at(16, 1, 0.99, 3)}, 24, true},
		{"a dip ends it", []Stat{at(8, 0.5, 1, 3), at(16, 1, 0.85, 3), at(24, 1.5, 0.95, 3)}, 8, true},
		{"none", []Stat{at(8, 0.5, 0.5, 3), at(16, 1, 0.9, 3)}, 0, false},
		{"not scored", []Stat{at(8, 0.5, 1, 3), at(16, 1, 1, 0), at(24, 1.5, 1, 3)}, 8, true},
	} {
		got, ok := Effective(c.stats)
		if ok != c.ok || got.Size != c.want {
			t.Errorf("%s: %d (%v), want %d (%v)", c.name, got.Size, ok, c.want, c.ok)
		}
	}
	s := section{stats: []Stat{at(8, 0.5, 1, 3), at(16, 1, 0.99, 3), at(24, 1.5, 0.86, 3), at(32, 2, 0.1, 3)}}
	var b strings.Builder
	s.Markdown(&b)
	if !strings.Contains(b.String(), "| effective size |") || !strings.Contains(b.String(), "| 24 (1.5x) |\n") {
		t.Errorf("the table lacks the effective size column or rope_copy's 24 (1.5x):\n%s", b.String())
	}
}
