package main

import (
	"encoding/json"
	"os"
	"path/filepath"
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
		{[]string{"-config", "tiny", "-steps", "x"}, "-steps"},
		{[]string{"-config", "tiny", "-bogus"}, "-bogus"},
		{[]string{"-config", "tiny", "-steps", "5", "-warmup", "5"}, "-steps"},
		{[]string{"-config", "tiny", "extra"}, "extra"},
		{[]string{"-config", "tiny", "-concurrent", "0"}, "-concurrent"},
		{[]string{"-config", "tiny", "-concurrent", "1,x"}, "-concurrent"},
		{[]string{"-config", "tiny", "-concurrent", "17"}, "-concurrent"},
		{[]string{"-config", "tiny", "-ops", "-torch"}, "-ops: not with -torch"},
		{[]string{"-config", "tiny", "-ops", "-concurrent", "1,2"}, "-ops: not with -torch, -concurrent"},
		{[]string{"-config", "tiny", "-ops", "-stock-ops"}, "-ops: not with -torch, -concurrent or -stock-ops"},
		{[]string{"-config", "tiny", "-seq-len", "-4"}, "-seq-len: -4"},
		{[]string{"-config", "tiny", "-seq-len", "100000"}, "-seq-len: 100000"},
		{[]string{"-config", "tiny", "-seq-len", "16", "-torch"}, "not with -torch"},
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
		// Four times the tiny config's 8 tokens a sequence, in a batch of one: the same 16 tokens.
		{[]string{"-config", "tiny", "-steps", "3", "-warmup", "1", "-seq-len", "32"}, `"batch":1,"seq_len":32`},
	} {
		code, stdout, stderr := cmdtest.Run(t, binary, "", c.args...)
		if code != 0 || !strings.Contains(stdout, c.mode) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want %s", c.args, code, stdout, stderr, c.mode)
		}
	}
}

// TestConcurrent runs one and two copies at once of each side, PyTorch's a stand-in script that
// prints a fixed rate, and checks the aggregates: the stand-in's two copies sum to twice its
// rate, and every copy of ours was measured.
func TestConcurrent(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "torch_ref.py")
	if err := os.WriteFile(script, []byte(`print('{"tokens_per_s": 1000, "step_ms_median": 1}')`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	python := "/usr/bin/python3"
	if _, err := os.Stat(python); err != nil {
		t.Skip("no /usr/bin/python3 for the stand-in script")
	}
	code, stdout, stderr := cmdtest.Run(t, binary, "", "-config", "tiny", "-steps", "4", "-warmup", "1", "-concurrent", "1,2", "-rounds", "1",
		"-torch", "-python", python, "-script", script)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var got struct {
		Go []struct {
			Copies    int     `json:"copies"`
			Aggregate float64 `json:"aggregate_tokens_per_s"`
		} `json:"go"`
		Torch []struct {
			Copies    int     `json:"copies"`
			Aggregate float64 `json:"aggregate_tokens_per_s"`
		} `json:"torch"`
	}
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatalf("%v: %s", err, stdout)
	}
	if len(got.Go) != 2 || len(got.Torch) != 2 || got.Go[1].Copies != 2 || !(got.Go[0].Aggregate > 0) || !(got.Go[1].Aggregate > 0) ||
		got.Torch[0].Aggregate != 1000 || got.Torch[1].Aggregate != 2000 {
		t.Fatalf("rows %+v", got)
	}
	if !strings.Contains(stderr, "aggregate tokens/s") {
		t.Errorf("no table on stderr:\n%s", stderr)
	}
}

// TestOps times the parts of the tiny config's training steps: every fused op's forward and
// backward pass is there, each a positive time, and no part is counted twice (what is left of
// the step for gorgonia is not negative).
func TestOps(t *testing.T) {
	code, stdout, stderr := cmdtest.Run(t, binary, "", "-config", "tiny", "-steps", "6", "-warmup", "1", "-ops")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var res Result
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatal(err)
	}
	for _, part := range []string{"Linear", "∂Linear", "Attention", "∂Attention", "LayerNorm", "∂LayerNorm", "GELU", "∂GELU", "Embed", "∂Embed", "CrossEntropy", opsAdamW, opsBatch} {
		if ms, ok := res.OpsMS[part]; !ok || ms <= 0 {
			t.Errorf("%s: %v ms a step (recorded: %v), want a positive time", part, ms, ok)
		}
	}
	if rest, ok := res.OpsMS[opsRest]; !ok || rest < 0 {
		t.Errorf("%s: %v ms a step (recorded: %v): the parts add up to more than the step", opsRest, rest, ok)
	}
	if !strings.Contains(stderr, "∂Linear") || !strings.Contains(stderr, "step (mean)") {
		t.Errorf("no table of the parts on stderr: %q", stderr)
	}
	code, stdout, _ = cmdtest.Run(t, binary, "", "-config", "tiny", "-steps", "3", "-warmup", "1")
	if code != 0 || strings.Contains(stdout, "ops_ms_per_step") {
		t.Errorf("without -ops: exit %d, %s", code, stdout)
	}
}
