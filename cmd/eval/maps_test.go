package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"extrapolate/experiments/evaluate"
)

// TestEvalMaps checks -map on one checkpoint: a result per map, named by type and the fields
// given, crossed with -scaling; LM-Infinite and StreamingLLM, whose windows hold every key at
// the training length, score 1x as plain RoPE does, and change the score past it.
func TestEvalMaps(t *testing.T) {
	ckpt := train(t, "rope")
	out := filepath.Join(t.TempDir(), "maps")
	code, stdout, stderr := runEval(t, "-checkpoint", ckpt, "-map", "none,rerope:window=4,lm_infinite,streaming:sinks=2", "-scaling", "none,yarn", "-out", out, "-quiet")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	names := []string{"none", "rerope(window=4)", "lm_infinite", "streaming(sinks=2)", "yarn(factor=auto)", "yarn(factor=auto) + rerope(window=4)", "yarn(factor=auto) + lm_infinite", "yarn(factor=auto) + streaming(sinks=2)"}
	b, err := os.ReadFile(filepath.Join(out, evaluate.ScalingsJSON))
	if err != nil {
		t.Fatal(err)
	}
	var rep evaluate.Report
	if err := json.Unmarshal(b, &rep); err != nil || len(rep.Results) != len(names) {
		t.Fatalf("report of %d results, want %d: %v", len(rep.Results), len(names), err)
	}
	ppl := map[string][]float64{}
	for i, r := range rep.Results {
		if r.Scaling != names[i] {
			t.Errorf("result %d is %q, want %q", i, r.Scaling, names[i])
		}
		if !strings.Contains(stdout, names[i]) {
			t.Errorf("the table lacks %s:\n%s", names[i], stdout)
		}
		for _, l := range r.Lengths {
			if l.Perplexity == nil {
				t.Fatalf("%s at %d: no perplexity", r.Scaling, l.Length)
			}
			ppl[r.Scaling] = append(ppl[r.Scaling], *l.Perplexity)
		}
	}
	for _, m := range []string{"lm_infinite", "streaming(sinks=2)"} {
		if d := math.Abs(ppl[m][0] - ppl["none"][0]); d > 1e-4 {
			t.Errorf("%s at 1x: %v, plain RoPE %v", m, ppl[m][0], ppl["none"][0])
		}
		if ppl[m][2] == ppl["none"][2] {
			t.Errorf("%s at 4x: %v, the same as plain RoPE", m, ppl[m][2])
		}
	}
	if ppl["rerope(window=4)"][0] == ppl["none"][0] {
		t.Errorf("ReRoPE with a window of 4 scores 1x as plain RoPE: %v", ppl["none"][0])
	}
}

// TestEvalMapsBadInput checks that a bad -map is refused up front in one line naming it.
func TestEvalMapsBadInput(t *testing.T) {
	rope, alibi := train(t, "rope"), train(t, "alibi")
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"-checkpoint", rope, "-map", ""}, "-map: empty value"},
		{[]string{"-checkpoint", rope, "-map", "none,,rerope"}, "an empty name"},
		{[]string{"-checkpoint", rope, "-map", "longrope"}, "longrope"},
		{[]string{"-checkpoint", rope, "-map", "none:window=2"}, "none takes no fields"},
		{[]string{"-checkpoint", rope, "-map", "rerope:window"}, "want name=value"},
		{[]string{"-checkpoint", rope, "-map", "rerope:window=2:window=3"}, "given twice"},
		{[]string{"-checkpoint", rope, "-map", "rerope:windw=2"}, "windw"},
		{[]string{"-checkpoint", rope, "-map", "rerope:window=-1"}, "position.distance_map.window"},
		{[]string{"-checkpoint", alibi, "-map", "rerope"}, "-map rerope"},
	}
	for _, c := range cases {
		out := filepath.Join(t.TempDir(), "out")
		code, _, stderr := runEval(t, append(c.args, "-out", out, "-quiet")...)
		msg := strings.TrimSpace(stderr)
		if code != 2 || !strings.Contains(msg, c.want) || strings.Contains(msg, "\n") || strings.Contains(msg, "panic") {
			t.Errorf("%v: exit %d, stderr %q; want 2 and one line naming %q", c.args, code, msg, c.want)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%v: wrote %s", c.args, out)
		}
	}
}
