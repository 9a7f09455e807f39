package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestComparisonBadInput checks comparison flags that used to exit 0 having done nothing: a
// shard that selects no run, and a report with no runs to report.
func TestComparisonBadInput(t *testing.T) {
	dir := setup(t, good)
	os.WriteFile(filepath.Join(dir, "cmp.yaml"), []byte("comparison: cmp\nseeds: [1, 2]\nruns: [{config: config}]\n"), 0o644)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-shard", "1/1000000000000"}, "-shard"},
		{[]string{"-shard", "2/3"}, "-shard"},
		{[]string{"-report"}, "-report"},
	} {
		out := filepath.Join(dir, "out")
		code, _, stderr := runTrain(t, dir, append([]string{"-config", "./cmp.yaml", "-out", out, "-quiet"}, c.args...)...)
		msg := strings.TrimSpace(stderr)
		if code != 2 || !strings.Contains(msg, c.want) || strings.Contains(msg, "\n") {
			t.Errorf("%v: exit %d, stderr %q; want 2 and one line naming %s", c.args, code, msg, c.want)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%v: created %s", c.args, out)
		}
	}
}

// snapshot reads every file under dir, by path.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		files[path] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestComparisonNotReplaced re-runs a finished comparison with a changed setting: like a single
// run, it must refuse to replace the finished runs without -overwrite, in one line naming a run
// folder and the flag, with nothing written; with -overwrite it trains them again.
func TestComparisonNotReplaced(t *testing.T) {
	dir := setup(t, good)
	os.WriteFile(filepath.Join(dir, "cmp.yaml"), []byte("comparison: cmp\nseeds: [1, 2]\nruns: [{config: config}]\n"), 0o644)
	args := []string{"-config", "./cmp.yaml", "-out", "out", "-quiet"}
	if code, _, stderr := runTrain(t, dir, args...); code != 0 {
		t.Fatalf("first run: exit %d: %s", code, stderr)
	}
	before := snapshot(t, filepath.Join(dir, "out"))
	code, _, stderr := runTrain(t, dir, append(args, "-set", "train.steps=4")...)
	msg := strings.TrimSpace(stderr)
	if code != 2 || strings.Contains(msg, "\n") || !strings.Contains(msg, filepath.Join("out", "runs", "tiny-s1")) ||
		!strings.Contains(msg, "-overwrite") || !strings.Contains(msg, "train.steps") {
		t.Fatalf("exit %d, stderr %q; want 2 and one line naming the run folder, train.steps and -overwrite", code, msg)
	}
	after := snapshot(t, filepath.Join(dir, "out"))
	if len(after) != len(before) {
		t.Fatalf("the refused comparison left %d files, want the %d there were", len(after), len(before))
	}
	for path, b := range before {
		if after[path] != b {
			t.Fatalf("the refused comparison changed %s", path)
		}
	}
	if code, _, stderr := runTrain(t, dir, append(args, "-set", "train.steps=4", "-overwrite")...); code != 0 {
		t.Fatalf("with -overwrite: exit %d: %s", code, stderr)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "out", "runs", "tiny-s2", "config.yaml"))
	if !strings.Contains(string(b), "steps: 4") {
		t.Fatalf("-overwrite did not train the runs again:\n%s", b)
	}
}
