package exit

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"extrapolate/internal/inputerr"
)

// TestCode checks the status each kind of error calls for, wrapped or not.
func TestCode(t *testing.T) {
	for _, c := range []struct {
		err  error
		want int
	}{
		{nil, 0},
		{errors.New("disk full"), Failure},
		{inputerr.Wrap(errors.New("train.steps: 0")), BadInput},
		{fmt.Errorf("run x: %w", inputerr.Wrap(errors.New("bad"))), BadInput},
		{fmt.Errorf("%w at train step 3; checkpoint saved", ErrInterrupted), Interrupted},
		{errNotWritten, Interrupted},
	} {
		if got := Code(c.err); got != c.want {
			t.Errorf("Code(%v) = %d, want %d", c.err, got, c.want)
		}
	}
}

// TestFailAndBad checks the one line each writes and the status each returns.
func TestFailAndBad(t *testing.T) {
	var b bytes.Buffer
	c := New("eval", &b)
	if got := c.Bad(errors.New("-tokens: -1, want a positive number")); got != BadInput {
		t.Errorf("Bad: %d, want %d", got, BadInput)
	}
	if got := c.Fail(errors.New("writing x: disk full")); got != Failure {
		t.Errorf("Fail: %d, want %d", got, Failure)
	}
	want := "eval: -tokens: -1, want a positive number\neval: writing x: disk full\n"
	if b.String() != want {
		t.Errorf("stderr %q, want %q", b.String(), want)
	}
}

// TestParse checks that a bad flag, or an argument that is no flag, is an error of one line
// naming it, with no usage written, and that -h writes the usage and exits 0.
func TestParse(t *testing.T) {
	var out bytes.Buffer
	fs := flag.NewFlagSet("bench", flag.ExitOnError)
	fs.SetOutput(&out)
	fs.Int("steps", 1, "steps")
	fs.Usage = func() { fmt.Fprintln(fs.Output(), "usage: bench") }
	c := New("bench", &out)
	err := c.Parse(fs, []string{"-steps", "x"})
	if err == nil || !strings.Contains(err.Error(), "-steps") || strings.Contains(err.Error(), "\n") || out.Len() != 0 {
		t.Errorf("-steps x: %v, output %q; want one line naming -steps and no output", err, out.String())
	}
	if err := c.Parse(fs, []string{"-steps", "2", "extra"}); err == nil || !strings.Contains(err.Error(), `unexpected argument "extra"`) {
		t.Errorf("extra: %v, want it refused by name", err)
	}
	err = c.Parse(fs, []string{"-h"})
	if !errors.Is(err, flag.ErrHelp) || out.String() != "usage: bench\n" {
		t.Errorf("-h: %v, output %q; want flag.ErrHelp and the usage", err, out.String())
	}
	if got := c.Bad(err); got != 0 || out.String() != "usage: bench\n" {
		t.Errorf("Bad(flag.ErrHelp): %d, output %q; want 0 and nothing more written", got, out.String())
	}
}

// TestFirstSignal sends the process a SIGINT: the context is cancelled, the command says what
// it is doing, Write writes nothing and Fail returns Interrupted.
func TestFirstSignal(t *testing.T) {
	var b syncBuffer
	c := New("export", &b)
	ctx, stop := c.Signals("stopping: nothing will be written")
	defer stop()
	if err := c.Write(func() error { return nil }); err != nil {
		t.Fatalf("Write before any signal: %v", err)
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ctx.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the signal did not cancel the context")
	}
	if !c.Interrupted() {
		t.Error("Interrupted: false after a signal")
	}
	wrote := false
	err := c.Write(func() error { wrote = true; return nil })
	if wrote || !errors.Is(err, ErrInterrupted) {
		t.Errorf("Write after a signal: wrote %v, %v; want nothing written and ErrInterrupted", wrote, err)
	}
	if got := c.Fail(err); got != Interrupted {
		t.Errorf("Fail: %d, want %d", got, Interrupted)
	}
	want := "\nexport: stopping: nothing will be written (again to quit at once)\nexport: interrupted before writing; nothing written\n"
	if b.String() != want {
		t.Errorf("stderr %q, want %q", b.String(), want)
	}
}

// TestSecondSignalWaitsForWrite runs a command in a child process that signals itself twice
// while it writes its output: it quits with Interrupted, but only once the output is whole.
func TestSecondSignalWaitsForWrite(t *testing.T) {
	if out := os.Getenv("EXIT_TEST_OUT"); out != "" {
		secondSignalChild(out)
		return
	}
	out := filepath.Join(t.TempDir(), "out")
	cmd := exec.Command(os.Args[0], "-test.run=^TestSecondSignalWaitsForWrite$")
	cmd.Env = append(os.Environ(), "EXIT_TEST_OUT="+out)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != Interrupted {
		t.Fatalf("child: %v, want exit status %d; stderr %q", err, Interrupted, stderr.String())
	}
	if b, err := os.ReadFile(out); err != nil || string(b) != "whole\n" {
		t.Errorf("output %q (%v), want it whole", b, err)
	}
	if !strings.HasSuffix(stderr.String(), "child: quitting\n") {
		t.Errorf("stderr %q, want it to end in the second signal's line", stderr.String())
	}
}

// secondSignalChild is the child of TestSecondSignalWaitsForWrite: it signals itself twice
// in the middle of writing out, then finishes writing it.
func secondSignalChild(out string) {
	c := New("child", os.Stderr)
	_, stop := c.Signals("stopping")
	defer stop()
	c.Write(func() error {
		syscall.Kill(os.Getpid(), syscall.SIGINT)
		time.Sleep(200 * time.Millisecond)
		syscall.Kill(os.Getpid(), syscall.SIGINT)
		time.Sleep(500 * time.Millisecond) // the second signal is handled by now
		return os.WriteFile(out, []byte("whole\n"), 0o644)
	})
	// Not reached when the second signal waited for the write and quit.
	os.Exit(0)
}

// TestStop checks that stop releases the signals: none is caught after it, and calling it
// twice is harmless.
func TestStop(t *testing.T) {
	c := New("x", &syncBuffer{})
	ctx, stop := c.Signals("stopping")
	stop()
	stop()
	if ctx.Err() == nil {
		t.Error("stop left the context alive")
	}
	if c.Interrupted() {
		t.Error("Interrupted with no signal")
	}
}

// syncBuffer is a buffer the signal handler and the test may write and read at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
