package main

import (
	"errors"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"extrapolate/internal/cmdtest"
	"extrapolate/internal/exporttest"
)

var zoologyScript = exporttest.Script("zoology_mqar.py")

// zoology runs pytorch/zoology_mqar.py with args, and returns its exit status and output.
func zoology(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	return cmdtest.Run(t, exporttest.Python, "", append([]string{zoologyScript}, args...)...)
}

// TestZoologyWindows reads the script's held-out windows back against Zoology's layout
// (zoology/data/multiquery_ar.py), at vocab 128: four pairs of distinct keys from 1 to 63 and
// distinct values from 64 to 127; after them each key once, at an even offset from the end of
// the pairs, the byte before its value's target; no other target. --show puts the value after
// its query; --tag puts mqar: before all of it.
func TestZoologyWindows(t *testing.T) {
	exporttest.NeedTorch(t)
	for _, flags := range [][]string{nil, {"--show"}, {"--tag"}, {"--show", "--tag"}} {
		name := strings.Join(flags, " ")
		code, stdout, stderr := zoology(t, append([]string{"--windows", "100"}, flags...)...)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", name, code, stderr)
		}
		lines := strings.Split(strings.TrimSpace(stdout), "\n")
		if len(lines) != 100 {
			t.Fatalf("%s: %d windows, want 100", name, len(lines))
		}
		shown, tagged := strings.Contains(name, "--show"), strings.Contains(name, "--tag")
		for i, line := range lines {
			if err := checkWindow(line, shown, tagged); err != nil {
				t.Fatalf("%s: window %d: %v\n%s", name, i, err, line)
			}
		}
	}
}

// checkWindow checks one line of --windows: tokens, |, targets.
func checkWindow(line string, shown, tagged bool) error {
	x, y, ok := strings.Cut(line, " | ")
	if !ok {
		return errors.New("no ' | ' between tokens and targets")
	}
	tokens, targets := numbers(x), numbers(y)
	start, n := 0, 64
	if tagged {
		if !strings.HasPrefix(x, "109 113 97 114 58 ") { // mqar:
			return errors.New("the window does not open with mqar:")
		}
		start, n = 5, 69
	}
	if len(tokens) != n || len(targets) != n {
		return errors.New("tokens or targets not " + strconv.Itoa(n) + " long")
	}
	values, seen := map[int]int{}, map[int]bool{}
	for p := 0; p < 4; p++ {
		k, v := tokens[start+2*p], tokens[start+2*p+1]
		if k < 1 || k > 63 || v < 64 || v > 127 || values[k] != 0 || seen[v] {
			return errors.New("pair " + strconv.Itoa(p) + " is not a new key of 1–63 and a new value of 64–127")
		}
		values[k], seen[v] = v, true
	}
	asked := map[int]bool{}
	for i := start; i < n; i++ {
		switch k := tokens[i]; {
		case i < start+8 || targets[i] == -100:
			continue
		case (i-start-8)%2 != 0 || values[k] == 0 || asked[k]:
			return errors.New("a target at " + strconv.Itoa(i) + " not after a key asked once at an even offset")
		case targets[i] != values[k]:
			return errors.New("the target at " + strconv.Itoa(i) + " is not its key's value")
		case shown && tokens[i+1] != values[k]:
			return errors.New("--show: the value does not follow its query at " + strconv.Itoa(i))
		default:
			asked[k] = true
		}
	}
	for i := 0; i < start+8; i++ {
		if targets[i] != -100 {
			return errors.New("a target among the pairs or the tag")
		}
	}
	if len(asked) != 4 {
		return errors.New(strconv.Itoa(len(asked)) + " keys asked, want 4")
	}
	return nil
}

func numbers(s string) []int {
	var out []int
	for _, f := range strings.Fields(s) {
		v, err := strconv.Atoi(f)
		if err != nil {
			return nil
		}
		out = append(out, v)
	}
	return out
}

// TestZoologyOurs trains an untrained export of this project's model on Zoology's windows for a
// few steps (--ours) and checks the line that scores it.
func TestZoologyOurs(t *testing.T) {
	exporttest.NeedTorch(t)
	dir := filepath.Join(t.TempDir(), "untrained")
	if code, _, stderr := cmdtest.Run(t, binary, "", "-config", tinyConfig(t), "-out", dir); code != 0 {
		t.Fatalf("export: exit %d: %s", code, stderr)
	}
	code, stdout, stderr := zoology(t, "--ours", dir, "--steps", "3", "--tag")
	want := regexp.MustCompile(`^tiny: steps 3 loss [0-9.]+ acc [01]\.[0-9]{3} exact [01]\.[0-9]{3} [0-9]+s\n$`)
	if code != 0 || !want.MatchString(stdout) {
		t.Fatalf("exit %d: %q %s", code, stdout, stderr)
	}
}

// TestZoologyBadInput gives the script flags it refuses: one line naming the flag, exit 2.
func TestZoologyBadInput(t *testing.T) {
	exporttest.NeedTorch(t)
	missing := filepath.Join(t.TempDir(), "missing")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--heads", "3"}, "--heads 3"},
		{[]string{"--steps", "0"}, "--steps 0"},
		{[]string{"--seed", "-1"}, "--seed -1"},
		{[]string{"--ours", missing, "--vocab", "512"}, "--vocab 512"},
		{[]string{"--ours", missing}, missing},
	} {
		cmdtest.BadInput(t, exporttest.Python, "", c.want, append([]string{zoologyScript}, c.args...)...)
	}
}
