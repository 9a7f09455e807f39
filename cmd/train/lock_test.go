package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// startTrain starts the train command in dir and waits until its run is under way: its resolved
// config is written only once it holds the folder's lock.
func startTrain(t *testing.T, dir, out string, args ...string) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"-config", "./config.yaml", "-out", out, "-quiet"}, args...)...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	for {
		if _, err := os.Stat(filepath.Join(dir, out, "config.yaml")); err == nil {
			return cmd, &stderr
		}
		if cmd.ProcessState != nil {
			t.Fatalf("the run ended before starting: %s", stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// stop interrupts a started run and returns its exit status.
func stop(t *testing.T, cmd *exec.Cmd) int {
	t.Helper()
	cmd.Process.Signal(os.Interrupt)
	err := cmd.Wait()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatal(err)
	}
	return cmd.ProcessState.ExitCode()
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
			first, stderr := startTrain(t, dir, out, c.first...)
			before, _ := os.ReadFile(filepath.Join(dir, out, "config.yaml"))
			code, _, msg := runTrain(t, dir, append([]string{"-config", "./config.yaml", "-out", out, "-quiet"}, c.then...)...)
			msg = strings.TrimSpace(msg)
			want := fmt.Sprintf("process %d", first.Process.Pid)
			if code != 2 || !strings.Contains(msg, want) || strings.Contains(msg, "\n") {
				t.Errorf("second run: exit %d, stderr %q; want 2 and one line naming %s", code, msg, want)
			}
			after, _ := os.ReadFile(filepath.Join(dir, out, "config.yaml"))
			if !bytes.Equal(before, after) {
				t.Error("the second run changed config.yaml")
			}
			if code := stop(t, first); code != 130 || !strings.Contains(stderr.String(), "checkpoint saved") {
				t.Errorf("first run: exit %d, stderr %q; want 130 and its checkpoint saved", code, stderr.String())
			}
		})
	}
}

// TestFailedSaveOnInterrupt interrupts a run whose checkpoint cannot be written (its folder is
// gone, as good as a full disk): it must fail with exit 1, not offer a resume.
func TestFailedSaveOnInterrupt(t *testing.T) {
	dir := setup(t, strings.Replace(good, "steps: 3,", "steps: 1000000,", 1))
	cmd, stderr := startTrain(t, dir, "out")
	if err := os.RemoveAll(filepath.Join(dir, "out")); err != nil {
		t.Fatal(err)
	}
	code := stop(t, cmd)
	msg := stderr.String()
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
