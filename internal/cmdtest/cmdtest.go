// Package cmdtest builds a command once for its tests and runs it as a user would.
package cmdtest

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
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
