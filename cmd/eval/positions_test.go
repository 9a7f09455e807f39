package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"extrapolate/experiments/config"
	"extrapolate/experiments/evaluate"
)

// TestEvalRandomizedPositions checks cmd/eval on a checkpoint trained at randomized positions:
// it says where it places the windows, scores each length as the run scored it (the same
// windows at the same draws: the same loss, to the bit), finds a length past the range not
// applicable, and refuses a distance map, naming the flag.
func TestEvalRandomizedPositions(t *testing.T) {
	ckpt := trainWith(t, "rope", func(c *config.Config) {
		var tr config.Config
		if err := yaml.Unmarshal([]byte("train: {positions: {type: randomized, noise_max_length: 32}}"), &tr); err != nil {
			t.Fatal(err)
		}
		c.Train.Positions = tr.Train.Positions
	})
	b, err := os.ReadFile(filepath.Join(filepath.Dir(ckpt), "ppl_vs_len.json"))
	if err != nil {
		t.Fatal(err)
	}
	var run struct {
		Lengths []struct {
			Length     int      `json:"length"`
			Applicable bool     `json:"applicable"`
			Loss       *float64 `json:"loss"`
		} `json:"lengths"`
	}
	if err := json.Unmarshal(b, &run); err != nil || len(run.Lengths) != 3 {
		t.Fatalf("the run's results %s: %v", b, err)
	}
	out := filepath.Join(t.TempDir(), "scal")
	code, stdout, stderr := runEval(t, "-checkpoint", ckpt, "-scaling", "none", "-out", out, "-quiet")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "own sorted draw of positions from [0, 32)") {
		t.Errorf("the output does not say where the windows are placed:\n%s", stdout)
	}
	b, err = os.ReadFile(filepath.Join(out, evaluate.ScalingsJSON))
	if err != nil {
		t.Fatal(err)
	}
	var rep evaluate.Report
	if err := json.Unmarshal(b, &rep); err != nil || len(rep.Results) != 1 {
		t.Fatalf("report %s: %v", b, err)
	}
	for i, l := range rep.Results[0].Lengths {
		want := run.Lengths[i]
		switch {
		case l.Length > 32:
			if l.Applicable || want.Applicable || !strings.Contains(l.Reason, "noise_max_length") {
				t.Errorf("length %d past the range: %+v, the run's %+v; want not applicable, naming the field", l.Length, l, want)
			}
		case !l.Applicable || !want.Applicable || *l.Loss != *want.Loss:
			t.Errorf("length %d: %+v, the run's %+v; want the same loss", l.Length, l, want)
		}
	}
	code, _, stderr = runEval(t, "-checkpoint", ckpt, "-map", "rerope:window=4", "-out", out, "-quiet")
	if code != 2 || !strings.Contains(stderr, "-map rerope") {
		t.Fatalf("a distance map: exit %d, %s; want 2, naming the flag", code, stderr)
	}
}
