package main

import (
	"testing"
	"time"

	"extrapolate/internal/cmdtest"
)

// TestInterrupt stops a measurement of 100,000 steps: the command prints no result and exits
// 130 (internal/exit). It used to die of the signal.
func TestInterrupt(t *testing.T) {
	cmdtest.Interrupted(t, binary, "", "bench", "stopping: nothing will be printed", time.Second,
		[]string{"-config", "tiny", "-steps", "100000"})
}
