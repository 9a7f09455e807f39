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
