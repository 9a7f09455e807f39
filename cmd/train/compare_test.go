package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestComparisonBadInput checks comparison flags that used to exit 0 having done nothing: a
// shard that selects no run, a report with no runs to report, and -runs naming no run; and -runs
// without -out, where the part's report would replace the whole comparison's, or on a config
// that is not a comparison's; and -runs, -shard or -out given empty, as an unset shell variable
// gives them (an empty -runs compared every run). Each exits 2 with one line and creates no
// folder.
func TestComparisonBadInput(t *testing.T) {
	dir := setup(t, good)
	os.WriteFile(filepath.Join(dir, "cmp.yaml"), []byte("comparison: cmp\nseeds: [1, 2]\nruns: [{config: config}]\n"), 0o644)
	out := filepath.Join(dir, "out")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-out", out, "-shard", "1/1000000000000"}, "-shard"},
		{[]string{"-out", out, "-shard", "2/3"}, "-shard"},
		{[]string{"-out", out, "-report"}, "-report"},
		{[]string{"-out", out, "-runs", "tiny,other*"}, "other*"},
		{[]string{"-out", out, "-runs", "[t"}, "-runs"},
		{[]string{"-runs", "tiny"}, "-out"},
		{[]string{"-out", out, "-runs", ""}, "-runs: empty"},
		{[]string{"-out", out, "-shard", ""}, "-shard: empty"},
		{[]string{"-out", "", "-runs", "tiny"}, "-out: empty"},
		{[]string{"-config", "./config.yaml", "-out", out, "-runs", "tiny"}, "comparison configs only"},
	} {
		code, _, stderr := runTrain(t, dir, append([]string{"-config", "./cmp.yaml", "-quiet"}, c.args...)...)
		msg := strings.TrimSpace(stderr)
		if code != 2 || !strings.Contains(msg, c.want) || strings.Contains(msg, "\n") {
			t.Errorf("%v: exit %d, stderr %q; want 2 and one line naming %s", c.args, code, msg, c.want)
		}
		for _, made := range []string{out, filepath.Join(dir, "results")} {
			if _, err := os.Stat(made); err == nil {
				t.Errorf("%v: created %s", c.args, made)
			}
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

// TestCheck runs -check, which scripts use before submitting work: it must find what the real
// command would refuse, exit 2 with one line for it, and write nothing either way.
func TestCheck(t *testing.T) {
	dir := setup(t, good)
	os.WriteFile(filepath.Join(dir, "cmp.yaml"), []byte("comparison: cmp\nseeds: [1, 2]\nruns: [{config: config}]\n"), 0o644)
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"-config", "./config.yaml"}, 0, "check: run tiny"},
		{[]string{"-config", "./cmp.yaml"}, 0, "2 runs, 0 with results"},
		{[]string{"-config", "./cmp.yaml", "-shard", "1/2"}, 0, "2 runs"},
		{[]string{"-config", "./cmp.yaml", "-shard", "0/3"}, 2, "-shard"},
		{[]string{"-config", "./cmp.yaml", "-report"}, 2, "-report"},
		{[]string{"-config", "./cmp.yaml", "-set", "train.stpes=3"}, 2, "train.stpes"},
		{[]string{"-config", "./cmp.yaml", "-set", "data.path=nowhere.txt"}, 2, "data.path"},
	} {
		out := filepath.Join(dir, "out")
		code, stdout, stderr := runTrain(t, dir, append(c.args, "-out", out, "-check")...)
		msg := strings.TrimSpace(stdout + stderr)
		if code != c.code || !strings.Contains(msg, c.want) || strings.Contains(msg, "\n") {
			t.Errorf("%v: exit %d, output %q; want %d and one line with %q", c.args, code, msg, c.code, c.want)
		}
		if _, err := os.Stat(out); err == nil {
			t.Fatalf("%v: created %s", c.args, out)
		}
	}
	// Over a finished comparison: a report can be written; a changed setting is refused.
	if code, _, stderr := runTrain(t, dir, "-config", "./cmp.yaml", "-out", "out", "-quiet"); code != 0 {
		t.Fatal(stderr)
	}
	before := snapshot(t, filepath.Join(dir, "out"))
	if code, stdout, stderr := runTrain(t, dir, "-config", "./cmp.yaml", "-out", "out", "-report", "-check"); code != 0 || !strings.Contains(stdout, "2 runs, 2 with results") {
		t.Errorf("-report -check on a finished comparison: exit %d, %q %q", code, stdout, stderr)
	}
	if code, _, stderr := runTrain(t, dir, "-config", "./cmp.yaml", "-out", "out", "-set", "train.steps=4", "-report", "-check"); code != 2 || !strings.Contains(stderr, "results for 0 of the 2 runs") {
		t.Errorf("-report -check of another config: exit %d, %q", code, stderr)
	}
	if code, _, stderr := runTrain(t, dir, "-config", "./cmp.yaml", "-out", "out", "-set", "train.steps=4", "-check"); code != 2 || !strings.Contains(stderr, "-overwrite") {
		t.Errorf("-check of another config: exit %d, %q", code, stderr)
	}
	after := snapshot(t, filepath.Join(dir, "out"))
	if len(after) != len(before) {
		t.Fatalf("-check changed the number of files from %d to %d", len(before), len(after))
	}
	for path, b := range before {
		if after[path] != b {
			t.Fatalf("-check changed %s", path)
		}
	}
}
