package main

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"extrapolate/internal/cmdtest"
)

var binary string

func TestMain(m *testing.M) {
	var cleanup func()
	binary, cleanup = cmdtest.Build("inspect")
	code := m.Run()
	cleanup()
	os.Exit(code)
}

func inspect(t *testing.T, dir string, args ...string) (int, string, string) {
	t.Helper()
	return cmdtest.Run(t, binary, dir, args...)
}

// TestYaRNJSON checks the example against the golden numbers of
// position/testdata/golden.py.
func TestYaRNJSON(t *testing.T) {
	code, out, stderr := inspect(t, t.TempDir(), "-scheme", "rope", "-scaling", "yarn", "-dim", "16", "-base", "10000", "-train-len", "128", "-eval-len", "512", "-factor", "4", "-json")
	if code != 0 {
		t.Fatal(stderr)
	}
	var r report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	want := []float64{1, 0.237170824513, 0.05, 0.00790569415042, 0.0025, 0.000790569415042, 0.00025, 7.90569415042e-05}
	if len(r.InvFreq) != 8 {
		t.Fatalf("%d frequencies", len(r.InvFreq))
	}
	for i, w := range want {
		if math.Abs(r.InvFreq[i]-w) > 1e-6*w {
			t.Fatalf("inv_freq[%d] = %g, want %g", i, r.InvFreq[i], w)
		}
	}
	if math.Abs(r.AttentionFactor-1.13862943611) > 1e-9 {
		t.Fatalf("attention_factor %g", r.AttentionFactor)
	}
}

func TestALiBiAndSinusoidalJSON(t *testing.T) {
	_, out, _ := inspect(t, t.TempDir(), "-scheme", "alibi", "-heads", "6", "-json")
	var r report
	json.Unmarshal([]byte(out), &r)
	want := []float64{0.25, 0.0625, 0.015625, 0.00390625, 0.5, 0.125}
	for i, w := range want {
		if len(r.Slopes) != 6 || r.Slopes[i] != w {
			t.Fatalf("slopes %v, want %v", r.Slopes, want)
		}
	}
	_, out, _ = inspect(t, t.TempDir(), "-scheme", "sinusoidal", "-dim", "6", "-eval-len", "3", "-json")
	r = report{}
	json.Unmarshal([]byte(out), &r)
	if len(r.Table) != 3 || len(r.Table[0]) != 6 || math.Abs(r.Table[1][2]-0.0463992234647) > 1e-9 {
		t.Fatalf("table %v", r.Table)
	}
}

func TestPictures(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"-scheme", "rope", "-scaling", "yarn", "-dim", "16", "-factor", "4"},
		{"-scheme", "rope"},
		{"-scheme", "alibi", "-heads", "4", "-eval-len", "16"},
		{"-scheme", "sinusoidal", "-dim", "32", "-eval-len", "64"},
	} {
		code, _, stderr := inspect(t, dir, args...)
		if code != 0 {
			t.Fatalf("%v: %s", args, stderr)
		}
		b, err := os.ReadFile(filepath.Join(dir, "inspect_"+args[1]+".png"))
		if err != nil || !bytes.HasPrefix(b, []byte("\x89PNG")) {
			t.Fatalf("%v: no PNG: %v", args, err)
		}
	}
}

func TestBadInput(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-scheme", "alibi", "-scaling", "yarn"}, "-scaling"},
		{[]string{"-scheme", "rope", "-scaling", "ntk", "-factor", "0.5"}, "-factor"},
		{[]string{"-scheme", "rope", "-scaling", "yarn", "-beta-fast", "1", "-beta-slow", "2"}, "-beta-fast"},
		{[]string{"-scheme", "rope", "-scaling", "longrope"}, "-scaling"},
		{[]string{"-scheme", "kerple"}, "-scheme"},
		{[]string{"-scheme", "rope", "-dim", "15"}, "even head dimension"},
		{[]string{"-scheme", "rope", "-dim", "0"}, "-dim"},
		{[]string{"-scheme", "rope", "-eval-len", "0"}, "-eval-len"},
		{[]string{"-scheme", "nope"}, "-scheme"},
		{[]string{"-scheme", "rope", "-dim", "1000000000", "-json"}, "-dim"},
		{[]string{"-scheme", "alibi", "-heads", "1000000000", "-json"}, "-heads"},
		{[]string{"-scheme", "alibi", "-heads", "5000", "-out", "a.png"}, "-heads"},
		{[]string{"-scheme", "alibi", "-heads", "1024", "-out", "a.png"}, "-heads and -eval-len"},
		{[]string{"-scheme", "sinusoidal", "-dim", "8192", "-eval-len", "65536", "-json"}, "-eval-len"},
	} {
		dir := t.TempDir()
		code, _, stderr := inspect(t, dir, c.args...)
		msg := strings.TrimSpace(stderr)
		if code != 2 || !strings.Contains(msg, c.want) || strings.Contains(msg, "\n") {
			t.Errorf("%v: exit %d, %q; want 2 and one line naming %s", c.args, code, msg, c.want)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 0 {
			t.Errorf("%v: wrote a file", c.args)
		}
	}
}
