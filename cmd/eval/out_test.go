package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"extrapolate/experiments/config"
	"extrapolate/experiments/evaluate"
)

// snapshot is every file of a folder, by name, with its content.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, e := range entries {
		b, _ := os.ReadFile(filepath.Join(dir, e.Name()))
		out[e.Name()] = string(b)
	}
	return out
}

// readRequest is the request recorded in a folder's report.
func readRequest(t *testing.T, dir string) *evaluate.Request {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, evaluate.ScalingsJSON))
	if err != nil {
		t.Fatal(err)
	}
	var rep evaluate.Report
	if err := json.Unmarshal(b, &rep); err != nil || rep.Request == nil {
		t.Fatalf("report %s: request %v, %v", b, rep.Request, err)
	}
	return rep.Request
}

// refused runs eval, which must refuse with exit 2 and one line naming the folder, -overwrite,
// -out and want, before evaluating (no progress, no table), the folder left as it was.
func refused(t *testing.T, out, want string, args ...string) {
	t.Helper()
	before := snapshot(t, out)
	code, stdout, stderr := runEval(t, append(args, "-out", out)...)
	msg := strings.TrimSpace(stderr)
	if code != 2 || strings.Contains(msg, "\n") || stdout != "" {
		t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2, one line and no output", args, code, stdout, msg)
	}
	for _, s := range []string{"eval: results folder " + out + " ", "use -overwrite", "or -out", want} {
		if !strings.Contains(msg, s) {
			t.Errorf("%v: %q does not say %q", args, msg, s)
		}
	}
	if after := snapshot(t, out); !reflect.DeepEqual(before, after) {
		t.Errorf("%v: the folder changed", args)
	}
}

// TestEvalRefusesOtherResults runs eval into a folder holding an earlier evaluation's results:
// another request is refused before evaluating, naming what differs, the results untouched; the
// same request (the same checkpoint, by content, and the same flags once the checkpoint's
// defaults are filled in) replaces them, as train resumes a run of the same config; -overwrite
// replaces any, and leaves the user's own files alone.
func TestEvalRefusesOtherResults(t *testing.T) {
	ckpt := train(t, "rope") // eval.lengths 16, 32, 64, eval.tokens 256
	other := trainWith(t, "rope", func(c *config.Config) { c.Seed = 2 })
	out := filepath.Join(t.TempDir(), "out")
	first := []string{"-checkpoint", ckpt, "-scaling", "none,yarn", "-quiet"}
	if code, _, stderr := runEval(t, append(first, "-out", out)...); code != 0 {
		t.Fatalf("first run: exit %d: %s", code, stderr)
	}
	os.WriteFile(filepath.Join(out, "notes.txt"), []byte("mine"), 0o644)
	base := []string{"-checkpoint", ckpt, "-scaling", "none,yarn"}
	for _, c := range []struct {
		args []string
		want string
	}{
		{append(base, "-lengths", "16,32"), "(-lengths: 16,32,64 there, 16,32 here)"},
		{append(base, "-tokens", "128", "-lengths", "16,32,64"), "(-tokens: 256 there, 128 here)"},
		{[]string{"-checkpoint", ckpt, "-scaling", "none"}, "-scaling/-map: none, yarn(factor=auto) there, none here"},
		{[]string{"-checkpoint", ckpt, "-scaling", "yarn,none"}, "-scaling/-map: none, yarn(factor=auto) there, yarn(factor=auto), none here"},
		{append(base, "-beta-fast", "16"), "yarn(beta_fast=16, factor=auto) here"},
		{append(base, "-factor", "2"), "yarn(factor=2) here"},
		{[]string{"-checkpoint", ckpt, "-map", "none,rerope"}, "none, rerope here"},
		{[]string{"-checkpoint", other, "-scaling", "none,yarn"}, "-checkpoint: " + ckpt + " (checksum "},
	} {
		refused(t, out, c.want, c.args...)
	}

	// The same request, spelled with the config's lengths and a copy of the checkpoint: the
	// results are replaced, and record the copy.
	cp := filepath.Join(t.TempDir(), "copy.ckpt")
	b, _ := os.ReadFile(ckpt)
	os.WriteFile(cp, b, 0o644)
	want := readRequest(t, out)
	for _, args := range [][]string{first, {"-checkpoint", cp, "-scaling", "none, yarn", "-lengths", "16,32,64", "-tokens", "256", "-quiet"}} {
		os.Remove(filepath.Join(out, evaluate.ScalingsPNG))
		if code, _, stderr := runEval(t, append(args, "-out", out)...); code != 0 {
			t.Fatalf("%v: exit %d: %s; want the same request to replace its results", args, code, stderr)
		}
		if _, err := os.Stat(filepath.Join(out, evaluate.ScalingsPNG)); err != nil {
			t.Errorf("%v: the results were not written again: %v", args, err)
		}
		if got := readRequest(t, out); !reflect.DeepEqual(got, want) {
			t.Errorf("%v: request %+v, want %+v", args, got, want)
		}
	}
	var rep evaluate.Report
	b, _ = os.ReadFile(filepath.Join(out, evaluate.ScalingsJSON))
	if json.Unmarshal(b, &rep); rep.Checkpoint != cp {
		t.Errorf("the report names %s, want the copy %s", rep.Checkpoint, cp)
	}

	// Another checkpoint put in place of the one evaluated is another checkpoint.
	os.WriteFile(cp, mustRead(t, other), 0o644)
	refused(t, out, "-checkpoint: "+cp+" (checksum "+want.Checksum[:12]+"…) there, "+cp+" (", "-checkpoint", cp, "-scaling", "none,yarn")

	// -overwrite replaces them; the user's file stays.
	code, _, stderr := runEval(t, "-checkpoint", ckpt, "-scaling", "none", "-lengths", "16", "-out", out, "-overwrite", "-quiet")
	if code != 0 {
		t.Fatalf("-overwrite: exit %d: %s", code, stderr)
	}
	if got := readRequest(t, out); !reflect.DeepEqual(got.Lengths, []int{16}) || !reflect.DeepEqual(got.Variants, []string{"none"}) {
		t.Errorf("-overwrite: request %+v, want the new one", got)
	}
	if b, err := os.ReadFile(filepath.Join(out, "notes.txt")); err != nil || string(b) != "mine" {
		t.Errorf("notes.txt: %q, %v; want it untouched", b, err)
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestEvalRefusesUnrecordedResults runs eval into folders whose results do not say which
// evaluation wrote them: a report without a request (written before eval recorded it), one
// that does not read, results without a report. Each is refused without -overwrite and
// replaced with it; a folder where a results file would go is refused even then. A task
// checkpoint's results beside the report are removed once -overwrite replaced them with a
// corpus checkpoint's, so that the folder holds one evaluation.
func TestEvalRefusesUnrecordedResults(t *testing.T) {
	ckpt := train(t, "rope")
	args := []string{"-checkpoint", ckpt, "-scaling", "none", "-lengths", "16"}
	tasksReport := `{"checkpoint": "t.ckpt", "examples": 20, "request": {"checkpoint_checksum": "00", "variants": ["none"], "examples": 20}, "results": []}`
	for _, c := range []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"no request", map[string]string{evaluate.ScalingsJSON: `{"checkpoint": "x.ckpt", "results": []}`, evaluate.ScalingsCSV: "scaling\n"}, "whose ppl_by_scaling.json does not record what was evaluated"},
		{"not JSON", map[string]string{evaluate.ScalingsJSON: "{"}, "holds a ppl_by_scaling.json that does not read as eval's results"},
		{"no report", map[string]string{evaluate.ScalingsCSV: "scaling\n", evaluate.ScalingsSVG: "<svg/>"}, "holds ppl_by_scaling.csv, ppl_by_scaling.svg but no ppl_by_scaling.json, so they are not this evaluation's"},
		{"a task checkpoint's", map[string]string{evaluate.ScalingsJSON: tasksReport, evaluate.TaskScalingsCSV: "scaling\n", evaluate.TaskScalingsPNG: "png", evaluate.TaskScalingsSVG: "<svg/>"},
			"-checkpoint: t.ckpt (checksum 00…) there, " + ckpt + " ("},
	} {
		out := filepath.Join(t.TempDir(), "out")
		os.Mkdir(out, 0o755)
		for name, text := range c.files {
			os.WriteFile(filepath.Join(out, name), []byte(text), 0o644)
		}
		refused(t, out, c.want, args...)
		if code, _, stderr := runEval(t, append(args, "-out", out, "-overwrite", "-quiet")...); code != 0 {
			t.Errorf("%s, -overwrite: exit %d: %s", c.name, code, stderr)
			continue
		}
		got := snapshot(t, out)
		for _, f := range []string{evaluate.TaskScalingsCSV, evaluate.TaskScalingsPNG, evaluate.TaskScalingsSVG} {
			if _, ok := got[f]; ok {
				t.Errorf("%s, -overwrite: %s is left beside the new results", c.name, f)
			}
		}
		if len(got) != 4 || readRequest(t, out).Lengths[0] != 16 {
			t.Errorf("%s, -overwrite: the folder holds %d files, want the 4 new results", c.name, len(got))
		}
	}

	out := filepath.Join(t.TempDir(), "out")
	os.MkdirAll(filepath.Join(out, evaluate.ScalingsCSV), 0o755)
	for _, extra := range [][]string{nil, {"-overwrite"}} {
		code, stdout, stderr := runEval(t, append(append(args, "-out", out), extra...)...)
		msg := strings.TrimSpace(stderr)
		if want := "eval: results folder " + out + ": ppl_by_scaling.csv is a folder, where the results file would go; give another -out"; code != 2 || msg != want || stdout != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want 2 and %q", extra, code, stdout, msg, want)
		}
	}
}
