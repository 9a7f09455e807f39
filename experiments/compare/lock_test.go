package compare

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"extrapolate/internal/dirlock"
	"extrapolate/internal/inputerr"
)

// wantBusy fails unless err is an input error saying that folder is in use, with want in it.
func wantBusy(t *testing.T, what string, err error, folder, want string) {
	t.Helper()
	if !errors.Is(err, dirlock.ErrBusy) || !inputerr.Is(err) || !strings.Contains(err.Error(), folder) || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
		t.Fatalf("%s: %v; want an input error saying %s is in use, with %q", what, err, folder, want)
	}
}

// TestFolderLock: one writer at a time in a comparison's folder, whatever writes it (a
// comparison, a grid, a part, a report), refused in one line naming the folder and the
// holder's PID; the shards of one comparison share it, and refuse any other writer; a grid and
// a comparison in one of its point folders exclude each other. Nothing is trained.
func TestFolderLock(t *testing.T) {
	dir := t.TempDir()
	c, err := LoadPlan(writeTinyComparison(t, dir), nil)
	if err != nil {
		t.Fatal(err)
	}
	grid, err := LoadPlan(gridFiles(t, dir, "grid:\n  - {name: small}\n  - {name: wide, set: {train.steps: 24}}\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	part, err := c.Only([]string{"rope"})
	if err != nil {
		t.Fatal(err)
	}
	pid := fmt.Sprintf("process %d", os.Getpid())
	ctx := context.Background()

	out := filepath.Join(dir, "out")
	whole := &Runner{Plan: c, Dir: out}
	if err := whole.Lock(); err != nil {
		t.Fatal(err)
	}
	for _, other := range []struct {
		name string
		r    *Runner
	}{
		{"a grid", &Runner{Plan: grid, Dir: out}},
		{"the comparison again", &Runner{Plan: c, Dir: out}},
		{"a part", &Runner{Plan: part, Dir: out}},
		{"a shard", &Runner{Plan: c, Dir: out, Shard: Shard{I: 1, N: 2}}},
	} {
		_, err := other.r.Execute(ctx)
		wantBusy(t, other.name, err, out, pid+" holds")
		_, err = other.r.WriteReport()
		wantBusy(t, other.name+"'s report", err, out, pid+" holds")
		wantBusy(t, other.name+"'s check", other.r.CheckLock(), out, pid+" holds")
	}
	whole.Unlock()
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the folder made for the lock, left empty, is still there (%v)", err)
	}

	// Shards of one plan share the folder; a whole comparison, a report and another plan's
	// shards are refused while they hold it.
	s0, s1 := &Runner{Plan: c, Dir: out, Shard: Shard{I: 0, N: 2}}, &Runner{Plan: c, Dir: out, Shard: Shard{I: 1, N: 2}}
	if err := s0.Lock(); err != nil {
		t.Fatal(err)
	}
	if err := s1.CheckLock(); err != nil {
		t.Fatalf("the second shard's check: %v", err)
	}
	if err := s1.Lock(); err != nil {
		t.Fatalf("the second shard: %v", err)
	}
	_, err = (&Runner{Plan: c, Dir: out}).WriteReport()
	wantBusy(t, "a report while shards run", err, out, "shards of one comparison")
	wantBusy(t, "a report's check while shards run", (&Runner{Plan: c, Dir: out}).CheckLock(), out, "shards of one comparison")
	_, err = (&Runner{Plan: part, Dir: out, Shard: Shard{I: 0, N: 2}}).Execute(ctx)
	wantBusy(t, "a part's shard", err, out, "another comparison")
	// The same plan in other shards is the same writer: its runs' own locks keep two shards
	// from training one run.
	s2 := &Runner{Plan: c, Dir: out, Shard: Shard{I: 2, N: 3}}
	if err := s2.Lock(); err != nil {
		t.Fatalf("a shard of the same plan, of another count: %v", err)
	}
	for _, s := range []*Runner{s0, s1, s2} {
		s.Unlock()
	}
	if _, err := os.Stat(filepath.Join(out, dirlock.File)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the shards left their lock file (%v)", err)
	}

	// A grid writes its points' folders: a comparison in one of them, and the grid, exclude each
	// other, whichever comes first.
	g := filepath.Join(dir, "grid")
	single := &Runner{Plan: c, Dir: filepath.Join(g, "small")}
	if err := single.Lock(); err != nil {
		t.Fatal(err)
	}
	_, err = (&Runner{Plan: grid, Dir: g}).Execute(ctx)
	wantBusy(t, "a grid over a point folder in use", err, filepath.Join(g, "small"), pid+" holds")
	single.Unlock()
	gr := &Runner{Plan: grid, Dir: g, Shard: Shard{I: 0, N: 2}}
	if err := gr.Lock(); err != nil {
		t.Fatal(err)
	}
	_, err = single.Execute(ctx)
	wantBusy(t, "a comparison in a grid's point folder", err, g, "the folder it is in")
	gr.Unlock()
}

// TestPartFolder: a part never writes into a folder that holds runs it leaves out (the whole
// comparison's, or a larger part's), whether it would train, write its report or check, with
// -overwrite too; its own folder, resumed, is its to write. Nothing is trained: the runs'
// folders are made by hand.
func TestPartFolder(t *testing.T) {
	dir := t.TempDir()
	c, err := LoadPlan(writeTinyComparison(t, dir), nil)
	if err != nil {
		t.Fatal(err)
	}
	part, err := c.Only([]string{"rope"})
	if err != nil {
		t.Fatal(err)
	}
	// runsIn makes the folders of the planned runs with labels among labels, each holding its
	// config.yaml, as a run under way does.
	runsIn := func(out string, labels ...string) {
		for _, p := range c.Runs(out) {
			if strings.Contains(" "+strings.Join(labels, " ")+" ", " "+p.Label+" ") {
				if err := os.MkdirAll(p.Dir, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(p.Dir, "config.yaml"), p.Config().Marshal(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	refused := func(what string, err error, out string) {
		t.Helper()
		if !inputerr.Is(err) || !strings.Contains(err.Error(), "-runs: results folder "+out+" holds runs the part leaves out (runs/") || !strings.Contains(err.Error(), "-out") {
			t.Fatalf("%s: %v; want an input error naming the folder, a run left out and -out", what, err)
		}
	}
	whole := filepath.Join(dir, "whole")
	runsIn(whole, "rope", "yarn", "alibi")
	for _, overwrite := range []bool{false, true} {
		r := &Runner{Plan: part, Dir: whole, Overwrite: overwrite}
		refused("Check", r.Check(), whole)
		_, err := r.Execute(context.Background())
		refused("Execute", err, whole)
		_, err = r.WriteReport()
		refused("WriteReport", err, whole)
		refused("CheckReport", r.CheckReport(), whole)
	}
	// The whole's report alone names its runs.
	bare := filepath.Join(dir, "bare")
	runsIn(bare, "rope")
	report := `{"runs": [{"label": "rope", "seed": 1}, {"label": "yarn", "seed": 1}]}`
	if err := os.WriteFile(filepath.Join(bare, ComparisonJSON), []byte(report), 0o644); err != nil {
		t.Fatal(err)
	}
	refused("a folder whose report names runs left out", (&Runner{Plan: part, Dir: bare}).Check(), bare)
	// The part's own folder: its runs only. The whole comparison may take it over: its report
	// replaces a smaller one's.
	own := filepath.Join(dir, "own")
	runsIn(own, "rope")
	if err := (&Runner{Plan: part, Dir: own}).Check(); err != nil {
		t.Fatalf("the part's own folder: %v", err)
	}
	if err := (&Runner{Plan: c, Dir: own}).Check(); err != nil {
		t.Fatalf("the whole comparison over a part's folder: %v", err)
	}
}
