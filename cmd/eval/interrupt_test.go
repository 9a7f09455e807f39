package main

import (
	"path/filepath"
	"testing"
	"time"

	"extrapolate/internal/cmdtest"
)

// TestInterrupt stops an evaluation of the committed checkpoint that takes over a minute: the
// first SIGINT says it is stopping and the command exits 130 having written nothing; with a
// second, it quits at once, 130 too. The signals are handled as every command handles them
// (internal/exit).
func TestInterrupt(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an evaluation of over a minute, twice")
	}
	ckpt := filepath.Join("..", "..", "examples", "checkpoints", "rope_ntk.ckpt")
	out := filepath.Join(t.TempDir(), "out")
	// Under way after 2 s: loading takes well under a second.
	cmdtest.Interrupted(t, binary, "", "eval", "stopping: nothing will be written", 2*time.Second,
		[]string{"-checkpoint", ckpt, "-lengths", "4096,8192", "-tokens", "131072", "-scaling", "none,yarn,ntk", "-out", out, "-quiet"}, out)
}
