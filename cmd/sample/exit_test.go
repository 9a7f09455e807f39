package main

import (
	"path/filepath"
	"testing"
	"time"

	"extrapolate/internal/cmdtest"
)

// TestInterrupt stops the generation of 4000 bytes from the committed checkpoint, which takes
// minutes: the command prints no text and exits 130 (internal/exit). It used to die of the
// signal.
func TestInterrupt(t *testing.T) {
	ckpt := filepath.Join("..", "..", "examples", "checkpoints", "rope_ntk.ckpt")
	cmdtest.Interrupted(t, binary, "", "sample", "stopping: nothing will be printed", time.Second,
		[]string{"-checkpoint", ckpt, "-prompt", "func main() {", "-n", "4000"})
}
