package compare

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"extrapolate/experiments/config"
)

// TestShippedConfigs loads every config in configs/: each must decode and check.
func TestShippedConfigs(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "..", "configs", "*.yaml"))
	if len(files) == 0 {
		t.Fatal("no configs found")
	}
	for _, f := range files {
		root, err := config.ReadYAML(f)
		if err != nil {
			t.Fatal(err)
		}
		if isComparison(root) {
			if _, err := Load(f, nil); err != nil {
				t.Errorf("%s: %v", f, err)
			}
			continue
		}
		if _, err := config.Load(f, nil); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}

// TestWholeNumbersEverywhere checks that a fraction in a whole-number field is refused wherever
// the config is given: the file, -set, and a comparison's set and runs' set, which yaml.v3
// would all truncate (train.steps 20.9 training 20 steps); the error names where, a comparison's
// setting by its field and line.
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
		{"file", func() error { _, err := config.Load(write("f.yaml", "name: f\nseed: 2.5\n"), nil); return err }, "seed: 2.5, want a whole number (line 2)"},
		{"-set", func() error { _, err := config.Load(run, []string{"train.steps=20.9"}); return err }, "train.steps: 20.9, want a whole number"},
		{"-set scheme field", func() error { _, err := config.Load(run, []string{"position.buckets=3.5"}); return err }, "position.buckets: 3.5, want a whole number"},
		{"-set 20.0", func() error { _, err := config.Load(run, []string{"eval.tokens=65536.0"}); return err }, "eval.tokens: 65536.0, want a whole number"},
		{"comparison set", func() error {
			_, err := Load(write("c1.yaml", "comparison: c1\nseeds: [1]\nset: {train.steps: 20.9}\nruns: [{config: run}]\n"), nil)
			return err
		}, "train.steps: 20.9, want a whole number (from set of " + filepath.Join(dir, "c1.yaml") + ", line 3)"},
		{"run set", func() error {
			_, err := Load(write("c2.yaml", "comparison: c2\nseeds: [1]\nruns: [{config: run, set: {position.buckets: 3.5}}]\n"), nil)
			return err
		}, "position.buckets: 3.5, want a whole number (from runs[0].set of " + filepath.Join(dir, "c2.yaml") + ", line 3)"},
		{"seeds", func() error {
			_, err := Load(write("c3.yaml", "comparison: c3\nseeds: [1, 2.5]\nruns: [{config: run}]\n"), nil)
			return err
		}, "seeds: 2.5, want a whole number (line 2)"},
	} {
		if err := c.err(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}

// TestTaskRunsTrainAtTheirWindows checks that runs on tasks may each train at the window its
// task needs, and that runs on the corpus still may not differ in training length.
func TestTaskRunsTrainAtTheirWindows(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "run.yaml"), []byte("name: run\nposition: {scheme: rope}\n"), 0o644)
	write := func(name, runs string) string {
		path := filepath.Join(dir, name)
		os.WriteFile(path, []byte("comparison: c\nseeds: [1]\nruns:\n"+runs), 0o644)
		return path
	}
	tasks := write("tasks.yaml", "  - {config: run, label: a, set: {task: {names: [copy]}, train.seq_len: 38}}\n  - {config: run, label: b, set: {task: {names: [flipflop]}, train.seq_len: 64}}\n")
	if _, err := Load(tasks, nil); err != nil {
		t.Fatalf("task runs at their own windows: %v", err)
	}
	corpus := write("corpus.yaml", "  - {config: run, label: a, set: {train.seq_len: 38}}\n  - {config: run, label: b, set: {train.seq_len: 64}}\n")
	if _, err := Load(corpus, nil); err == nil || !strings.Contains(err.Error(), "train.seq_len 64 differs from the first run's 38") {
		t.Fatalf("corpus runs at two lengths: %v", err)
	}
}
