package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestInterrupt stops an evaluation of the committed checkpoint that takes over a minute: the
// first SIGINT says it is stopping and the command exits 130 having written nothing; with a
// second, it quits at once, 130 too. The signals are handled as cmd/train handles them
// (internal/interrupt).
func TestInterrupt(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an evaluation of over a minute, twice")
	}
	ckpt := filepath.Join("..", "..", "examples", "checkpoints", "rope_ntk.ckpt")
	for _, signals := range []int{1, 2} {
		out := filepath.Join(t.TempDir(), "out")
		cmd := exec.Command(binary, "-checkpoint", ckpt, "-lengths", "4096,8192", "-tokens", "131072", "-scaling", "none,yarn,ntk", "-out", out, "-quiet")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Second) // under way: loading takes well under a second
		for range signals {
			cmd.Process.Signal(syscall.SIGINT)
			time.Sleep(100 * time.Millisecond)
		}
		err := cmd.Wait()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 130 {
			t.Fatalf("%d signals: %v, want exit status 130; stderr: %s", signals, err, stderr.String())
		}
		want := "eval: stopping: nothing will be written (again to quit at once)"
		if signals == 2 {
			want = "eval: quitting"
		}
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("%d signals: stderr %q lacks %q", signals, stderr.String(), want)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Errorf("%d signals: the output folder exists (%v): something was written", signals, err)
		}
	}
}
