package experiments

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

// TestShippedConfigs loads every config in configs/: each must decode and check.
func TestShippedConfigs(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "configs", "*.yaml"))
	if len(files) == 0 {
		t.Fatal("no configs found")
	}
	for _, f := range files {
		root, err := readYAML(f)
		if err != nil {
			t.Fatal(err)
		}
		if isComparison(root) {
			if _, err := LoadComparison(f, nil); err != nil {
				t.Errorf("%s: %v", f, err)
			}
			continue
		}
		if _, err := Load(f, nil); err != nil {
			t.Errorf("%s: %v", f, err)
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
	} {
		_, err := Load(filepath.Join("..", "configs", "rope.yaml"), c.sets)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%v: %v, want one line naming %s", c.sets, err, c.want)
		}
	}
}

// TestWholeNumbersEverywhere checks that a fraction in a whole-number field is refused wherever
// the config is given: the file, -set, and a comparison's set and runs' set, which yaml.v3
// would all truncate (train.steps 20.9 training 20 steps).
func TestWholeNumbersEverywhere(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	run := write("run.yaml", "name: run\nposition: {scheme: t5}\n")
	for _, c := range []struct {
		name string
		err  func() error
		want string
	}{
		{"file", func() error { _, err := Load(write("f.yaml", "name: f\nseed: 2.5\n"), nil); return err }, "seed: 2.5, want a whole number (line 2)"},
		{"-set", func() error { _, err := Load(run, []string{"train.steps=20.9"}); return err }, "train.steps: 20.9, want a whole number"},
		{"-set scheme field", func() error { _, err := Load(run, []string{"position.buckets=3.5"}); return err }, "position.buckets: 3.5, want a whole number"},
		{"-set 20.0", func() error { _, err := Load(run, []string{"eval.tokens=65536.0"}); return err }, "eval.tokens: 65536.0, want a whole number"},
		{"comparison set", func() error {
			_, err := LoadComparison(write("c1.yaml", "comparison: c1\nseeds: [1]\nset: {train.steps: 20.9}\nruns: [{config: run}]\n"), nil)
			return err
		}, "train.steps: 20.9, want a whole number"},
		{"run set", func() error {
			_, err := LoadComparison(write("c2.yaml", "comparison: c2\nseeds: [1]\nruns: [{config: run, set: {position.buckets: 3.5}}]\n"), nil)
			return err
		}, "position.buckets: 3.5, want a whole number"},
		{"seeds", func() error {
			_, err := LoadComparison(write("c3.yaml", "comparison: c3\nseeds: [1, 2.5]\nruns: [{config: run}]\n"), nil)
			return err
		}, "seeds: 2.5, want a whole number (line 2)"},
	} {
		if err := c.err(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}
