package compare

import (
	"slices"
	"testing"
)

func TestGroupSources(t *testing.T) {
	in := []string{
		"learned: wpe (38 × 64), lr × 1.",
		"T5: max_distance 38.",
		"learned: wpe (64 × 64), lr × 1.",
		"FoX: a gate.",
		"learned: wpe (38 × 64), lr × 1.",
		"T5: max_distance 64.",
		"learned: wpe (59 × 64), lr × 1.",
		"FoX: a gate.",
		"learned: a table.",
	}
	want := []string{
		"learned: wpe (38 × 64), lr × 1. (The numbers are the first run's: 3 settings differ only in them, each run's its own.)",
		"T5: max_distance 38. (The numbers are the first run's: 2 settings differ only in them, each run's its own.)",
		"FoX: a gate.",
		"learned: a table.",
	}
	if got := groupSources(in); !slices.Equal(got, want) {
		t.Errorf("groupSources:\n got %q\nwant %q", got, want)
	}
}
