// Package cmdtest builds a command once for its tests and runs it as a user would.
package cmdtest

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

// Build compiles the package in the current folder (the command under test) into a temporary
// folder, from TestMain, and returns the binary and a function that removes it.
func Build(name string) (binary string, cleanup func()) {
	dir, err := os.MkdirTemp("", name+"-test")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, name)
	if out, err := exec.Command("go", "build", "-o", binary, ".").CombinedOutput(); err != nil {
		panic(string(out))
	}
	return binary, func() { os.RemoveAll(dir) }
}

// Run runs binary with args in dir ("" for the current folder) and returns its exit status and
// output.
func Run(t *testing.T, binary, dir string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Dir = dir
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0, out.String(), errOut.String()
	case errors.As(err, &exit):
		return exit.ExitCode(), out.String(), errOut.String()
	}
	t.Fatal(err)
	return 0, "", ""
}

// BadInput runs binary with args in dir and checks that it refuses them as bad input, as every
// command does (internal/exit): exit status 2, nothing on stdout, and one line on stderr that
// holds want, the flag, field or file at fault.
func BadInput(t *testing.T, binary, dir, want string, args ...string) {
	t.Helper()
	code, stdout, stderr := Run(t, binary, dir, args...)
	msg := strings.TrimSpace(stderr)
	if code != 2 || stdout != "" || strings.Contains(msg, "\n") || !strings.Contains(msg, want) {
		t.Errorf("%q: exit %d, stdout %q, stderr %q; want 2 and one line naming %q", args, code, stdout, msg, want)
	}
}

// Interrupt runs binary with args in dir, sends it signals SIGINTs, the first after it has run
// for after and the others 100 ms apart, and returns its exit status (-1 when a signal killed
// it) and output once it has exited. It fails the test if the command is still running a
// minute after the first signal.
func Interrupt(t *testing.T, binary, dir string, after time.Duration, signals int, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Dir = dir
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	time.Sleep(after)
	for i := range signals {
		if i > 0 {
			time.Sleep(100 * time.Millisecond)
		}
		cmd.Process.Signal(syscall.SIGINT)
	}
	select {
	case <-done:
	case <-time.After(time.Minute):
		cmd.Process.Kill()
		<-done
		t.Fatalf("%q: still running a minute after %d signals; stderr %q", args, signals, errOut.String())
	}
	return cmd.ProcessState.ExitCode(), out.String(), errOut.String()
}

// Interrupted checks that a command stops on signals the one way every command does
// (internal/exit): run with args in dir and sent a SIGINT after it has run for after, it says
// "<name>: <stopping> (again to quit at once)", stops at its next safe point, says where
// ("<name>: interrupted ...") and exits 130; sent two, it says "<name>: quitting" instead,
// unless it had stopped on the first already, and exits 130 too. Either way it prints nothing
// on stdout and leaves none of the files outputs, so that after is to fall before the
// command's output.
func Interrupted(t *testing.T, binary, dir, name, stopping string, after time.Duration, args []string, outputs ...string) {
	t.Helper()
	first, stopped, quit := name+": "+stopping+" (again to quit at once)", name+": interrupted", name+": quitting"
	for signals := 1; signals <= 2; signals++ {
		code, stdout, stderr := Interrupt(t, binary, dir, after, signals, args...)
		last := strings.Contains(stderr, stopped)
		if signals == 2 {
			last = last || strings.Contains(stderr, quit)
		}
		if code != 130 || stdout != "" || !strings.Contains(stderr, first) || !last {
			t.Errorf("%d signals: exit %d, stdout %q, stderr %q; want 130, nothing printed, %q and then %q or, for a second signal, %q", signals, code, stdout, stderr, first, stopped, quit)
		}
		for _, f := range outputs {
			if !filepath.IsAbs(f) {
				f = filepath.Join(dir, f)
			}
			if _, err := os.Lstat(f); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("%d signals: %s is there (%v): something was written", signals, f, err)
			}
		}
	}
}

// TextCorpus writes a small text corpus of about 40 KB, made of short lines of Go-like text,
// into a temporary folder and returns its path: enough for a tiny model to learn something.
func TextCorpus(t testing.TB) string {
	t.Helper()
	var b bytes.Buffer
	for i := 0; b.Len() < 40000; i++ {
		b.WriteString("func f" + string(rune('a'+i%26)) + "(x int) int { return x + 1 }\n")
	}
	path := filepath.Join(t.TempDir(), "corpus.txt")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// Main builds the command for its package's tests into *binary, runs them, removes it and
// exits: a command's TestMain is one call.
func Main(m *testing.M, name string, binary *string) {
	var cleanup func()
	*binary, cleanup = Build(name)
	code := m.Run()
	cleanup()
	os.Exit(code)
}
