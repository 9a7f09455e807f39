package compare

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOnly narrows the tiny comparison by label patterns: the plan's order is kept, a run
// matched by two patterns is planned once, and a pattern that matches nothing, or is malformed,
// is an error naming it.
func TestOnly(t *testing.T) {
	c, err := LoadPlan(writeTinyComparison(t, t.TempDir()), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		patterns []string
		want     string // the labels planned, a run per seed
	}{
		{[]string{"rope"}, "rope rope"},
		{[]string{"alibi", "yarn"}, "yarn yarn alibi alibi"},
		{[]string{"*a*", "y*"}, "yarn yarn alibi alibi"},
		{[]string{"*"}, "rope rope yarn yarn alibi alibi"},
	} {
		part, err := c.Only(tc.patterns)
		if err != nil {
			t.Fatalf("%q: %v", tc.patterns, err)
		}
		var got []string
		for _, r := range part.Runs("") {
			got = append(got, r.Label)
		}
		if strings.Join(got, " ") != tc.want {
			t.Errorf("%q: planned %q, want %q", tc.patterns, got, tc.want)
		}
	}
	for _, bad := range [][]string{{"rope", "none*"}, {"[r"}, {}} {
		if _, err := c.Only(bad); err == nil || !strings.Contains(err.Error(), "-runs") ||
			(len(bad) > 0 && !strings.Contains(err.Error(), bad[len(bad)-1])) {
			t.Errorf("%q: %v, want an error naming -runs and the pattern", bad, err)
		}
	}
}

// TestOnlyReportsThePart runs a part of the tiny comparison: its report compares the part's runs
// alone, and YaRN, whose plain RoPE run is left out, trains weights of its own, the same as the
// whole comparison's YaRN takes from RoPE's training, so its numbers are the same.
func TestOnlyReportsThePart(t *testing.T) {
	dir := t.TempDir()
	c, err := LoadPlan(writeTinyComparison(t, dir), nil)
	if err != nil {
		t.Fatal(err)
	}
	part, err := c.Only([]string{"yarn"})
	if err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	out := filepath.Join(dir, "part")
	rep, err := (&Runner{Plan: part, Dir: out, Progress: &log, Command: "test"}).Execute(context.Background())
	if err != nil || rep == nil {
		t.Fatalf("report %v, error %v", rep, err)
	}
	if strings.Contains(log.String(), "trains the same weights as") {
		t.Fatalf("yarn shared the training of a run left out:\n%s", log.String())
	}
	if len(rep.Series) != 1 || rep.Series[0].Label != "yarn" {
		t.Fatalf("series %v, want yarn alone", rep.Series)
	}
	if runs, _ := os.ReadDir(filepath.Join(out, RunsDir)); len(runs) != 2 {
		t.Fatalf("%d run folders, want yarn's two", len(runs))
	}
	whole := filepath.Join(dir, "whole")
	if _, err := (&Runner{Plan: c, Dir: whole, Command: "test"}).Execute(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, run := range []string{"yarn-s1", "yarn-s2"} {
		a, errA := os.ReadFile(filepath.Join(out, RunsDir, run, "ppl_vs_len.csv"))
		b, errB := os.ReadFile(filepath.Join(whole, RunsDir, run, "ppl_vs_len.csv"))
		if errA != nil || errB != nil || !bytes.Equal(a, b) {
			t.Fatalf("%s: the part's perplexities differ from the whole comparison's (%v, %v):\n%s\n%s", run, errA, errB, a, b)
		}
	}
}
