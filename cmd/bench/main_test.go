package main

import (
	"strings"
	"testing"

	"extrapolate/internal/cmdtest"
)

var binary string

func TestMain(m *testing.M) { cmdtest.Main(m, "bench", &binary) }

// TestBadFlags checks that nonsense flags are refused with one line naming the flag, before
// anything is measured.
func TestBadFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-config", "D"}, `-config: "D", want A, B, C or tiny`},
		{[]string{"-config", "tiny", "-scheme", "bogus"}, "-scheme bogus"},
		{[]string{"-config", "tiny", "-scheme", "learned", "-eval", "2"}, "-scheme learned: cannot be measured at 16 positions"},
		{[]string{"-config", "tiny", "-torch", "-python", "/missing"}, "-python /missing"},
		{[]string{"-config", "tiny", "-torch", "-eval", "2"}, "-eval 2: not with -torch"},
		{[]string{"-config", "tiny", "-torch", "-scheme", "rope"}, "-scheme rope: not with -torch"},
		{[]string{"-config", "tiny", "-torch", "-script", "/missing.py"}, "-script /missing.py"},
		{[]string{"-config", "tiny", "-eval", "-1"}, "-eval: -1"},
		{[]string{"-config", "tiny", "-eval", "1000000"}, "-eval: 1000000"},
		{[]string{"-config", "tiny", "-rounds", "-3"}, "-rounds: -3"},
		{[]string{"-config", "tiny", "-warmup", "-5"}, "-warmup: -5"},
		{[]string{"-config", "tiny", "-steps", "0"}, "-steps: 0"},
		{[]string{"-config", "tiny", "-steps", "5", "-warmup", "5"}, "-steps"},
		{[]string{"-config", "tiny", "extra"}, "extra"},
	} {
		code, stdout, stderr := cmdtest.Run(t, binary, "", c.args...)
		msg := strings.TrimSpace(stderr)
		if code != 2 || !strings.Contains(msg, c.want) || strings.Contains(msg, "\n") || stdout != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want 2 and one line naming %q", c.args, code, stdout, msg, c.want)
		}
	}
}

// TestTiny measures the tiny config briefly, training and evaluating, to check the modes are
// reported as run.
func TestTiny(t *testing.T) {
	for _, c := range []struct {
		args []string
		mode string
	}{
		{[]string{"-config", "tiny", "-steps", "3", "-warmup", "1"}, `"mode":"train"`},
		{[]string{"-config", "tiny", "-steps", "3", "-warmup", "1", "-eval", "2"}, `"mode":"eval"`},
	} {
		code, stdout, stderr := cmdtest.Run(t, binary, "", c.args...)
		if code != 0 || !strings.Contains(stdout, c.mode) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want %s", c.args, code, stdout, stderr, c.mode)
		}
	}
}
