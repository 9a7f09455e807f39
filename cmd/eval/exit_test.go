package main

import (
	"path/filepath"
	"testing"

	"extrapolate/internal/cmdtest"
)

// TestFlagErrors checks that a flag the command cannot read, a missing -checkpoint and a stray
// argument are bad input like any other (internal/exit): one line naming it and exit status 2,
// not the flag package's usage.
func TestFlagErrors(t *testing.T) {
	ckpt := filepath.Join("..", "..", "examples", "checkpoints", "rope_ntk.ckpt")
	for _, c := range []struct {
		want string
		args []string
	}{
		{"-tokens", []string{"-checkpoint", ckpt, "-tokens", "many"}},
		{"-bogus", []string{"-checkpoint", ckpt, "-bogus"}},
		{"-checkpoint: missing", []string{"-scaling", "yarn"}},
		{`unexpected argument "extra"`, []string{"-checkpoint", ckpt, "extra"}},
	} {
		cmdtest.BadInput(t, binary, "", c.want, c.args...)
	}
}
