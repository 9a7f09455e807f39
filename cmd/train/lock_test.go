package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// started is a train command running in the background.
type started struct {
	cmd    *exec.Cmd
	stderr bytes.Buffer
	done   chan struct{} // closed when it has exited
}

// startTrain starts the train command in dir and waits until its run is under way: its resolved
// config is written only once it holds the folder's lock.
func startTrain(t *testing.T, dir, out string, args ...string) *started {
	t.Helper()
	s := &started{done: make(chan struct{})}
	s.cmd = exec.Command(binary, append([]string{"-config", "./config.yaml", "-out", out, "-quiet"}, args...)...)
	s.cmd.Dir = dir
	s.cmd.Stderr = &s.stderr
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { s.cmd.Wait(); close(s.done) }()
	t.Cleanup(func() { s.cmd.Process.Kill(); <-s.done })
	for {
		if _, err := os.Stat(filepath.Join(dir, out, "config.yaml")); err == nil {
			return s
		}
		select {
		case <-s.done:
			t.Fatalf("the run ended before starting: %s", s.stderr.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// stop sends sig to a started run and returns its exit status once it has exited.
func (s *started) stop(sig os.Signal) int {
	s.cmd.Process.Signal(sig)
	<-s.done
	return s.cmd.ProcessState.ExitCode()
}

// TestBusyFolderRefused starts a second run on the folder of a run under way: it must be refused,
// naming the first run's process, and change nothing, whether its config differs (it used to
// overwrite config.yaml) or not (it used to remove the first run's checkpoint in flight).
func TestBusyFolderRefused(t *testing.T) {
	cfg := strings.Replace(good, "steps: 3,", "steps: 1000000,", 1)
	dir := setup(t, cfg)
	for _, c := range []struct {
		name        string
		first, then []string
	}{
		{"other config", nil, []string{"-set", "train.steps=5"}},
		{"same config, checkpoint every step", []string{"-set", "train.checkpoint_every=1"}, []string{"-set", "train.checkpoint_every=1"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := strings.ReplaceAll(c.name, " ", "_")
			first := startTrain(t, dir, out, c.first...)
			before, _ := os.ReadFile(filepath.Join(dir, out, "config.yaml"))
			code, _, msg := runTrain(t, dir, append([]string{"-config", "./config.yaml", "-out", out, "-quiet"}, c.then...)...)
			msg = strings.TrimSpace(msg)
			want := fmt.Sprintf("process %d", first.cmd.Process.Pid)
			if code != 2 || !strings.Contains(msg, want) || strings.Contains(msg, "\n") {
				t.Errorf("second run: exit %d, stderr %q; want 2 and one line naming %s", code, msg, want)
			}
			after, _ := os.ReadFile(filepath.Join(dir, out, "config.yaml"))
			if !bytes.Equal(before, after) {
				t.Error("the second run changed config.yaml")
			}
			if code := first.stop(os.Interrupt); code != 130 || !strings.Contains(first.stderr.String(), "checkpoint saved") {
				t.Errorf("first run: exit %d, stderr %q; want 130 and its checkpoint saved", code, first.stderr.String())
			}
		})
	}
}

// TestFailedSaveOnInterrupt interrupts a run whose checkpoint cannot be written (its folder is
// gone, as good as a full disk): it must fail with exit 1, not offer a resume.
func TestFailedSaveOnInterrupt(t *testing.T) {
	dir := setup(t, strings.Replace(good, "steps: 3,", "steps: 1000000,", 1))
	run := startTrain(t, dir, "out")
	if err := os.RemoveAll(filepath.Join(dir, "out")); err != nil {
		t.Fatal(err)
	}
	code := run.stop(os.Interrupt)
	msg := run.stderr.String()
	if code != 1 || !strings.Contains(msg, "saving the checkpoint failed") || strings.Contains(msg, "resume with") {
		t.Fatalf("exit %d, stderr %q; want 1, the failed save and no resume command", code, msg)
	}
}

// TestCorruptCheckpointOnResume resumes from a truncated checkpoint: bad input, exit 2, as
// cmd/eval gives for the same file.
func TestCorruptCheckpointOnResume(t *testing.T) {
	dir := setup(t, good)
	if code, _, stderr := runTrain(t, dir, "-config", "./config.yaml", "-out", "out", "-quiet"); code != 0 {
		t.Fatal(stderr)
	}
	path := filepath.Join(dir, "out", "model.ckpt")
	b, _ := os.ReadFile(path)
	os.WriteFile(path, b[:len(b)/2], 0o644)
	code, _, stderr := runTrain(t, dir, "-config", "./config.yaml", "-out", "out", "-quiet")
	msg := strings.TrimSpace(stderr)
	if code != 2 || !strings.Contains(msg, "corrupt") || strings.Contains(msg, "\n") {
		t.Fatalf("exit %d, stderr %q; want 2 and one line saying the checkpoint is corrupt", code, msg)
	}
}

// TestHangupResumable closes the run's terminal, as far as the run can tell (SIGHUP): it must
// save a checkpoint and print a resume command that a shell splits back into the same
// arguments, however they are quoted.
func TestHangupResumable(t *testing.T) {
	dir := setup(t, strings.Replace(good, "steps: 3,", "steps: 1000000,", 1))
	args := []string{"-set", "eval.lengths=[8, 16]", "-set", "data.path='corpus.txt'"}
	run := startTrain(t, dir, "out", args...)
	code := run.stop(syscall.SIGHUP)
	msg := run.stderr.String()
	if code != 130 || !strings.Contains(msg, "checkpoint saved") {
		t.Fatalf("exit %d, stderr %q; want 130 and the checkpoint saved", code, msg)
	}
	_, line, ok := strings.Cut(msg, "resume with: ")
	if !ok {
		t.Fatalf("no resume command in %q", msg)
	}
	line = strings.TrimSpace(line)
	out, err := exec.Command("sh", "-c", `printf '%s\n' `+line).Output()
	if err != nil {
		t.Fatal(err)
	}
	want := append([]string{binary, "-config", "./config.yaml", "-out", "out", "-quiet"}, args...)
	if got := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n"); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("the shell reads %q as %q, want %q", line, got, want)
	}
}

// TestCheckSeesBusyFolder runs -check on a folder another process is writing in, a run's own
// and a comparison's run's: the command itself would be refused there, so the check must be,
// with the same one line naming the process, whatever the config.
func TestCheckSeesBusyFolder(t *testing.T) {
	dir := setup(t, strings.Replace(good, "steps: 3,", "steps: 1000000,", 1))
	os.WriteFile(filepath.Join(dir, "cmp.yaml"), []byte("comparison: cmp\nseeds: [1]\nruns: [{config: config}]\n"), 0o644)
	first := startTrain(t, dir, filepath.Join("cmp", "runs", "tiny-s1"))
	want := fmt.Sprintf("is in use by another process: process %d holds", first.cmd.Process.Pid)
	for _, args := range [][]string{
		{"-config", "./config.yaml", "-out", filepath.Join("cmp", "runs", "tiny-s1")},
		{"-config", "./config.yaml", "-out", filepath.Join("cmp", "runs", "tiny-s1"), "-set", "train.steps=5"},
		{"-config", "./cmp.yaml", "-out", "cmp"},
	} {
		code, stdout, stderr := runTrain(t, dir, append(args, "-check")...)
		msg := strings.TrimSpace(stderr)
		if code != 2 || !strings.Contains(msg, want) || strings.Contains(msg, "\n") || stdout != "" {
			t.Errorf("%v -check: exit %d, stdout %q, stderr %q; want 2 and one line with %q", args, code, stdout, msg, want)
		}
	}
	if code := first.stop(os.Interrupt); code != 130 {
		t.Errorf("the first run: exit %d, want 130: %s", code, first.stderr.String())
	}
}
