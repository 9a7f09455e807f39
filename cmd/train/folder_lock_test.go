package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The comparison and grid of these tests: two labels, one seed, on the tiny config.
const (
	lockCmp  = "comparison: cmp\nseeds: [1]\nruns: [{config: config}, {config: config, label: alibi, set: {position.scheme: alibi}}]\n"
	lockGrid = lockCmp + "grid: [{name: a}]\n"
)

// startCompare starts train in dir with args, in the background, and waits until a run of it is
// under way in out: a run's config.yaml is there. Stopped when the test ends.
func startCompare(t *testing.T, dir, out string, args ...string) *started {
	t.Helper()
	s := &started{done: make(chan struct{})}
	s.cmd = exec.Command(binary, append([]string{"-out", out, "-quiet"}, args...)...)
	s.cmd.Dir = dir
	s.cmd.Stderr = &s.stderr
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { s.cmd.Wait(); close(s.done) }()
	t.Cleanup(func() { s.cmd.Process.Kill(); <-s.done })
	deadline := time.After(2 * time.Minute)
	for {
		for _, pattern := range []string{"runs/*/config.yaml", "*/runs/*/config.yaml"} {
			if m, _ := filepath.Glob(filepath.Join(dir, out, pattern)); len(m) > 0 {
				return s
			}
		}
		select {
		case <-s.done:
			t.Fatalf("%v ended before a run started: %s", args, s.stderr.String())
		case <-deadline:
			t.Fatalf("%v: no run started in 2 minutes", args)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// wantRefused fails unless train, run with args in dir, exits 2 with one line on stderr holding
// every one of want.
func wantRefused(t *testing.T, dir string, args []string, want ...string) {
	t.Helper()
	code, _, stderr := runTrain(t, dir, args...)
	msg := strings.TrimSpace(stderr)
	ok := code == 2 && !strings.Contains(msg, "\n")
	for _, w := range want {
		ok = ok && strings.Contains(msg, w)
	}
	if !ok {
		t.Errorf("%v: exit %d, stderr %q; want 2 and one line with %q", args, code, msg, want)
	}
}

// TestComparisonAndGridOneWriter starts a comparison and a grid on one folder, each while the
// other runs: the second must be refused in one line naming the folder and the first's PID,
// -check too, and write nothing (both used to run, and the grid's REPORT.md replaced the
// comparison's). A comparison in the grid's point folder is refused too.
func TestComparisonAndGridOneWriter(t *testing.T) {
	dir := setup(t, good)
	os.WriteFile(filepath.Join(dir, "cmp.yaml"), []byte(lockCmp), 0o644)
	os.WriteFile(filepath.Join(dir, "grid.yaml"), []byte(lockGrid), 0o644)
	long := []string{"-set", "train.steps=1000000"}
	for _, c := range []struct{ first, second string }{{"grid", "cmp"}, {"cmp", "grid"}} {
		t.Run(c.first+" first", func(t *testing.T) {
			out := "out_" + c.first
			first := startCompare(t, dir, out, append([]string{"-config", "./" + c.first + ".yaml"}, long...)...)
			holder := fmt.Sprintf("process %d", first.cmd.Process.Pid)
			second := []string{"-config", "./" + c.second + ".yaml", "-out", out, "-quiet"}
			wantRefused(t, dir, second, out+" is in use", holder)
			wantRefused(t, dir, append(second, "-check"), out+" is in use", holder)
			wantRefused(t, dir, append(second, "-overwrite"), out+" is in use", holder)
			if c.first == "grid" {
				wantRefused(t, dir, []string{"-config", "./cmp.yaml", "-out", filepath.Join(out, "a"), "-quiet"}, "the folder it is in", holder)
			}
			// The second's runs' folders and its report; the first, training its first run,
			// writes neither.
			written := map[string][]string{"cmp": {"runs", "ppl_by_run.json", "REPORT.md"}, "grid": {"a", "claims_by_point.json", "REPORT.md"}}
			for _, f := range written[c.second] {
				if _, err := os.Stat(filepath.Join(dir, out, f)); err == nil {
					t.Errorf("the refused %s wrote %s", c.second, f)
				}
			}
			if code := first.stop(os.Interrupt); code != 130 {
				t.Errorf("the first: exit %d, want 130: %s", code, first.stderr.String())
			}
			if _, err := os.Stat(filepath.Join(dir, out, ".lock")); err == nil {
				t.Error("the interrupted comparison left its lock file")
			}
		})
	}
}

// TestPartNotIntoWhole runs a part of a comparison (-runs) into the folder of the whole: it must
// be refused, in one line naming the folder and -out, with the whole's report, tables and
// figures left as they were (it used to replace them with the part's), whether it would train,
// write its report only or check. Into a folder of its own it runs, and runs again (resumes).
func TestPartNotIntoWhole(t *testing.T) {
	dir := setup(t, good)
	os.WriteFile(filepath.Join(dir, "cmp.yaml"), []byte(lockCmp), 0o644)
	if code, _, stderr := runTrain(t, dir, "-config", "./cmp.yaml", "-out", "whole", "-quiet"); code != 0 {
		t.Fatalf("the whole comparison: exit %d: %s", code, stderr)
	}
	before := snapshot(t, filepath.Join(dir, "whole"))
	part := []string{"-config", "./cmp.yaml", "-runs", "tiny", "-out", "whole", "-quiet"}
	for _, extra := range [][]string{nil, {"-report"}, {"-check"}, {"-report", "-check"}, {"-overwrite"}} {
		wantRefused(t, dir, append(part, extra...), "-runs: results folder whole holds runs the part leaves out (runs/alibi-s1)", "-out")
	}
	after := snapshot(t, filepath.Join(dir, "whole"))
	if len(after) != len(before) {
		t.Errorf("the refused part left %d files in the whole's folder, want the %d there were", len(after), len(before))
	}
	for path, b := range before {
		if after[path] != b {
			t.Errorf("the refused part changed %s", path)
		}
	}
	for range 2 {
		if code, _, stderr := runTrain(t, dir, "-config", "./cmp.yaml", "-runs", "tiny", "-out", "part", "-quiet"); code != 0 {
			t.Fatalf("the part in its own folder: exit %d: %s", code, stderr)
		}
	}
	if b, err := os.ReadFile(filepath.Join(dir, "part", "REPORT.md")); err != nil || bytes.Contains(b, []byte("alibi")) {
		t.Fatalf("the part's report: %v, or it names the run left out", err)
	}
}

// TestShardsShareFolder starts both shards of a comparison on one folder: they run side by side,
// as submit.sh's job array does, while a whole comparison, -report and a shard of another
// config are refused, naming the shards' PIDs. Interrupted, both resume side by side.
func TestShardsShareFolder(t *testing.T) {
	dir := setup(t, good)
	os.WriteFile(filepath.Join(dir, "cmp.yaml"), []byte(lockCmp), 0o644)
	args := []string{"-config", "./cmp.yaml", "-set", "train.steps=1000000"}
	s0 := startCompare(t, dir, "out", append(args, "-shard", "0/2")...)
	s1 := startCompare(t, dir, "out", append(args, "-shard", "1/2")...)
	for _, run := range []string{"tiny-s1", "alibi-s1"} {
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
			if _, err := os.Stat(filepath.Join(dir, "out", "runs", run, "config.yaml")); err == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s did not start: %s %s", run, s0.stderr.String(), s1.stderr.String())
			}
		}
	}
	shards := fmt.Sprintf("shards of one comparison (processes %d, %d)", s0.cmd.Process.Pid, s1.cmd.Process.Pid)
	wantRefused(t, dir, append(args, "-out", "out"), "out is in use", shards)
	wantRefused(t, dir, append(args, "-out", "out", "-report"), "out is in use", shards)
	wantRefused(t, dir, []string{"-config", "./cmp.yaml", "-set", "train.steps=5", "-out", "out", "-shard", "0/2"}, "out is in use", "another comparison")
	for i, s := range []*started{s0, s1} {
		if code := s.stop(os.Interrupt); code != 130 || !strings.Contains(s.stderr.String(), "resume with") {
			t.Fatalf("shard %d: exit %d, want 130 and a resume command: %s", i, code, s.stderr.String())
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "out", ".lock")); err == nil {
		t.Error("the shards left their lock file")
	}
	// Both again: each resumes its run from its checkpoint, side by side.
	var again []*started
	for i, run := range []string{"tiny-s1", "alibi-s1"} {
		again = append(again, startSaying(t, dir, "resuming "+run+" from its checkpoint", append(args, "-out", "out", "-shard", fmt.Sprintf("%d/2", i))...))
	}
	for i, s := range again {
		if code := s.stop(os.Interrupt); code != 130 {
			t.Errorf("shard %d resumed: exit %d, want 130", i, code)
		}
	}
}

// TestShardsTogether runs both shards of a comparison on one folder at once, to the end: both
// succeed, and the one that finishes last writes the report, leaving no lock file behind.
func TestShardsTogether(t *testing.T) {
	dir := setup(t, good)
	os.WriteFile(filepath.Join(dir, "cmp.yaml"), []byte(lockCmp), 0o644)
	var cmds []*exec.Cmd
	var errs [2]bytes.Buffer
	for i := range 2 {
		cmd := exec.Command(binary, "-config", "./cmp.yaml", "-out", "out", "-quiet", "-shard", fmt.Sprintf("%d/2", i))
		cmd.Dir, cmd.Stderr = dir, &errs[i]
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("shard %d: %v: %s", i, err, errs[i].String())
		}
	}
	if b, err := os.ReadFile(filepath.Join(dir, "out", "REPORT.md")); err != nil || !bytes.Contains(b, []byte("alibi")) {
		t.Fatalf("no report of both runs after the shards: %v", err)
	}
	for _, f := range []string{".lock", ".lock-turn"} {
		if _, err := os.Stat(filepath.Join(dir, "out", f)); err == nil {
			t.Errorf("the shards left %s", f)
		}
	}
}

// startSaying starts train in dir with args, in the background, its progress on, and waits
// until a line of its stderr holds want. Stopped when the test ends.
func startSaying(t *testing.T, dir, want string, args ...string) *started {
	t.Helper()
	s := &started{done: make(chan struct{})}
	s.cmd = exec.Command(binary, args...)
	s.cmd.Dir = dir
	pipe, err := s.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	said := make(chan bool, 1)
	go func() {
		var all bytes.Buffer
		b := make([]byte, 4096)
		found := false
		for {
			n, err := pipe.Read(b)
			all.Write(b[:n])
			if !found && strings.Contains(all.String(), want) {
				found = true
				said <- true
			}
			if err != nil {
				break
			}
		}
		s.cmd.Wait()
		if !found {
			s.stderr.Write(all.Bytes())
			said <- false
		}
		close(s.done)
	}()
	t.Cleanup(func() { s.cmd.Process.Kill(); <-s.done })
	select {
	case ok := <-said:
		if !ok {
			t.Fatalf("%v ended without saying %q: %s", args, want, s.stderr.String())
		}
	case <-time.After(2 * time.Minute):
		t.Fatalf("%v: did not say %q in 2 minutes", args, want)
	}
	return s
}

// TestPartSkipsClaimsItLeavesOut: a part of a comparison that checks alibi_flat, whose runs
// the part (-runs tiny) leaves out, exits 0, its report marking the claim not judged there
// (issue 49: a part of the task comparison exited 1 on a claim of runs it left out).
func TestPartSkipsClaimsItLeavesOut(t *testing.T) {
	dir := setup(t, good)
	os.WriteFile(filepath.Join(dir, "cmp.yaml"), []byte(lockCmp+"claims: [alibi_flat]\n"), 0o644)
	code, _, stderr := runTrain(t, dir, "-config", "./cmp.yaml", "-runs", "tiny", "-out", "part", "-quiet")
	if code != 0 {
		t.Fatalf("the part: exit %d: %s", code, stderr)
	}
	b, err := os.ReadFile(filepath.Join(dir, "part", "REPORT.md"))
	if err != nil || !bytes.Contains(b, []byte("**not applicable** | not judged in this part: its runs are left out |")) {
		t.Fatalf("the part's report does not mark alibi_flat not judged (%v):\n%s", err, b)
	}
}
