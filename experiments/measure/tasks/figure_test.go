package tasks

import (
	"math"
	"slices"
	"strings"
	"testing"

	"extrapolate/experiments/measure"
	"extrapolate/task"
)

// TestSizeLabel checks that every registered task's size axis says what its size counts.
func TestSizeLabel(t *testing.T) {
	if len(task.Names()) == 0 {
		t.Fatal("no task registered")
	}
	for _, name := range task.Names() {
		if got := SizeLabel(name); !strings.HasPrefix(got, "size (") || strings.Contains(got, "own unit") {
			t.Errorf("%s: size axis titled %q, want its unit", name, got)
		}
	}
	if got := SizeLabel("someone_elses"); !strings.Contains(got, "own unit") {
		t.Errorf("a task outside the table: %q", got)
	}
}

// TestFigure checks the task figure: a panel per task, its axis titled with the task's unit, a
// row per scheme scored on it (and none for a scheme that was not), its sizes in order, and no
// score where a size was not applicable.
func TestFigure(t *testing.T) {
	rep := &measure.Report{Name: "tasks", Series: []*measure.Series{
		{Label: "rope_copy", Position: "rope"}, {Label: "learned_copy", Position: "learned"}, {Label: "rope_parity", Position: "rope"},
	}}
	stats := []Stat{
		{Label: "rope_copy", Task: "copy", Size: 16, Seeds: 3, Mean: 1},
		{Label: "rope_copy", Task: "copy", Size: 8, Seeds: 3, Mean: 1},
		{Label: "learned_copy", Task: "copy", Size: 8, Seeds: 3, Mean: 0.9},
		{Label: "learned_copy", Task: "copy", Size: 16, Seeds: 0, NotApplicable: "past the table"},
		{Label: "rope_parity", Task: "parity", Size: 16, Seeds: 3, Mean: 0.5},
	}
	f := section{rep, stats}.figure()
	if len(f.Panels) != 2 {
		t.Fatalf("%d panels, want 2", len(f.Panels))
	}
	cp, par := f.Panels[0], f.Panels[1]
	if cp.XLabel != "size (letters)" || par.XLabel != "size (bits)" {
		t.Errorf("axes titled %q and %q", cp.XLabel, par.XLabel)
	}
	if !slices.Equal(cp.Sizes, []int{8, 16}) || !slices.Equal(cp.Rows, []string{"rope", "learned"}) || !slices.Equal(par.Rows, []string{"rope"}) {
		t.Errorf("copy: sizes %v, rows %v; parity: rows %v", cp.Sizes, cp.Rows, par.Rows)
	}
	if cp.Values[1][0] != 0.9 || !math.IsNaN(cp.Values[1][1]) || cp.Mark != 16 {
		t.Errorf("copy: learned %v, mark %d", cp.Values[1], cp.Mark)
	}
}
