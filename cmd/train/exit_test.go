package main

import (
	"testing"

	"extrapolate/internal/cmdtest"
)

// TestFlagErrors checks that a flag the command cannot read, a missing -config and a stray
// argument are bad input like any other (internal/exit): one line naming it and exit status 2,
// not the flag package's usage of forty lines.
func TestFlagErrors(t *testing.T) {
	dir := setup(t, good)
	for _, c := range []struct {
		want string
		args []string
	}{
		{"-bogus", []string{"-config", "./config.yaml", "-bogus"}},
		{"-quiet", []string{"-config", "./config.yaml", "-quiet=maybe"}},
		{"-config: missing", nil},
		{`unexpected argument "extra"`, []string{"-config", "./config.yaml", "extra"}},
	} {
		cmdtest.BadInput(t, binary, dir, c.want, c.args...)
	}
}
