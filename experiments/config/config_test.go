package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSetOverrides(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.yaml")
	os.WriteFile(path, []byte("name: x\ntrain: {steps: 10}\n"), 0o644)
	c, err := Load(path, []string{"train.steps=7", "eval.lengths=[64,128]", "position.scaling.type=yarn", "position.scaling.factor=auto", "seed=9"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Train.Steps != 7 || len(c.Eval.Lengths) != 2 || c.Eval.Lengths[1] != 128 || c.Seed != 9 {
		t.Fatalf("overrides not applied: %+v", c)
	}
	if c.Position.Scaling == nil || c.Position.Scaling.Type != "yarn" || !c.Position.Scaling.Factor.Auto {
		t.Fatalf("nested override not applied: %+v", c.Position.Scaling)
	}
	// Defaults fill what the file leaves out, and min_lr follows lr.
	if c.Train.BatchSize != Default().Train.BatchSize || *c.Train.MinLR != c.Train.LR/10 {
		t.Fatalf("defaults: %+v", c.Train)
	}
	// The resolved config reads back to the same config.
	back := filepath.Join(t.TempDir(), "back.yaml")
	os.WriteFile(back, c.Marshal(), 0o644)
	c2, err := Load(back, nil)
	if err != nil {
		t.Fatal(err)
	}
	if string(c2.Marshal()) != string(c.Marshal()) {
		t.Fatalf("round trip changed the config:\n%s\n%s", c.Marshal(), c2.Marshal())
	}
}

func TestResolve(t *testing.T) {
	for in, want := range map[string]string{
		"rope":             filepath.Join("configs", "rope.yaml"),
		"rope.yaml":        filepath.Join("configs", "rope.yaml"),
		"./rope.yaml":      "./rope.yaml",
		"other/x.yaml":     "other/x.yaml",
		"/abs/path/z.yaml": "/abs/path/z.yaml",
	} {
		if got := Resolve(in); got != want {
			t.Errorf("Resolve(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestConfigFieldErrors checks, in process, that a bad value of a field a scheme, a scaling or
// the attention section declares is one line naming that field.
func TestConfigFieldErrors(t *testing.T) {
	for _, c := range []struct {
		sets []string
		want string
	}{
		{[]string{"position={scheme: t5, buckets: 1}"}, "position.buckets"},
		{[]string{"position={scheme: kerple, r1: 1}"}, "position.r1"},
		{[]string{"position={scheme: fire, hidden: x}"}, "position.hidden"},
		{[]string{"position.rotary_fraction=2"}, "position.rotary_fraction"},
		{[]string{"position.scheme=xpos", "position.gamma=-1"}, "position.gamma"},
		{[]string{"position.scaling={type: llama3, factor: 2, low_freq_factor: 5}"}, "position.scaling.high_freq_factor"},
		{[]string{"position.scaling={type: yarn, factor: 2, betafast: 5}"}, "position.scaling.betafast"},
		{[]string{"position={scheme: alibi, scaling: {type: ntk, factor: 2}}"}, "position.scaling"},
		{[]string{"position={layers: [rope, learned]}"}, "position.layers[1]"},
		{[]string{"attention.scale=hot"}, "attention.scale"},
		{[]string{"attention.temperature=1"}, "attention.temperature"},
		{[]string{"task={names: [copy, nosuch]}"}, "task.names"},
		{[]string{"task={names: [copy], examples: -3}"}, "task.examples"},
		{[]string{"task={names: [copy]}", "train.seq_len=20"}, "train.seq_len: 20, want at least 38"},
		{[]string{"task={names: [copy]}", "train.passkey={fraction: 0.5}"}, "train.passkey"},
	} {
		_, err := Load(filepath.Join("..", "..", "configs", "rope.yaml"), c.sets)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%v: %v, want one line naming %s", c.sets, err, c.want)
		}
	}
}
