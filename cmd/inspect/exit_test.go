package main

import (
	"path/filepath"
	"testing"
	"time"

	"extrapolate/internal/cmdtest"
)

// TestFlagErrors checks that a flag the command cannot read is bad input like any other
// (internal/exit): one line naming it and exit status 2, not the flag package's usage.
func TestFlagErrors(t *testing.T) {
	cmdtest.BadInput(t, binary, t.TempDir(), "-dim", "-scheme", "rope", "-dim", "wide")
	cmdtest.BadInput(t, binary, t.TempDir(), "-bogus", "-bogus")
}

// TestInterrupt stops an inspection of FIRE's bias that computes for seconds: the command
// writes no picture and prints nothing, and exits 130 (internal/exit). It used to die of the
// signal.
func TestInterrupt(t *testing.T) {
	out := filepath.Join(t.TempDir(), "fire.png")
	cmdtest.Interrupted(t, binary, "", "inspect", "stopping: nothing will be written", 500*time.Millisecond,
		[]string{"-scheme", "fire", "-heads", "16", "-layers", "4", "-eval-len", "2048", "-out", out}, out)
}
