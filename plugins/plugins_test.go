package plugins_test

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"extrapolate/internal/cmdtest"
)

// commands are the seven commands that import package plugins.
var commands = []string{"train", "eval", "sample", "inspect", "export", "import", "bench"}

// TestSchemeFromOutsideInEveryCommand follows the README's recipe as a user would (and checks
// first that each command's -h gives its synopsis and flags): the logdist
// scheme of its "Add a scheme" section, in a folder of its own, and one import line added to
// plugins/plugins.go. Both go in through a build overlay, so the tree is left as it is. Every
// command built with them takes the scheme: train trains it, and eval, sample, inspect, export
// and bench read its checkpoint or build it by name, import reads the export back into a
// checkpoint that eval scores as it scored the original. The same checkpoint, given to an eval
// built without the line, is refused in one line that says where to register the scheme.
func TestSchemeFromOutsideInEveryCommand(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	overlay := userOverlay(t, root, tmp)
	bin := filepath.Join(tmp, "bin")
	build(t, root, bin, []string{"-overlay", overlay}, commands)
	plain := filepath.Join(tmp, "plain")
	build(t, root, plain, nil, []string{"eval"})

	run := func(name string, args ...string) string {
		t.Helper()
		code, stdout, stderr := cmdtest.Run(t, filepath.Join(bin, name), tmp, args...)
		if code != 0 {
			t.Fatalf("%s %s: exit %d\n%s%s", name, strings.Join(args, " "), code, stdout, stderr)
		}
		return stdout + stderr
	}
	for _, name := range commands {
		checkHelp(t, filepath.Join(bin, name), name)
	}
	config := filepath.Join(tmp, "logdist.yaml")
	writeFile(t, config, "name: logdist\nseed: 1\ndata: {corpus: text, path: "+cmdtest.TextCorpus(t)+"}\n"+
		"model: {d_model: 16, layers: 1, heads: 2}\nposition: {scheme: logdist, slope: 0.5}\n"+
		"train: {seq_len: 16, batch_size: 4, steps: 20, log_every: 10}\n"+
		"eval: {lengths: [16, 32], tokens: 256, batch_tokens: 128}\n")
	out := filepath.Join(tmp, "run")
	run("train", "-config", config, "-out", out, "-quiet")
	ckpt := filepath.Join(out, "model.ckpt")

	if got := run("eval", "-checkpoint", ckpt, "-lengths", "16,32", "-out", filepath.Join(tmp, "eval"), "-quiet"); !strings.Contains(got, "32 (2x)") {
		t.Errorf("eval scored no length 32:\n%s", got)
	}
	run("sample", "-checkpoint", ckpt, "-prompt", "func ", "-n", "8")
	var shown struct {
		Scheme string `json:"scheme"`
	}
	if err := json.Unmarshal([]byte(run("inspect", "-checkpoint", ckpt, "-json")), &shown); err != nil || shown.Scheme != "logdist" {
		t.Errorf("inspect -checkpoint: scheme %q, %v", shown.Scheme, err)
	}
	run("inspect", "-scheme", "logdist", "-heads", "2", "-json")
	run("export", "-checkpoint", ckpt, "-out", filepath.Join(tmp, "export"))
	exported, err := os.ReadFile(filepath.Join(tmp, "export", "config.json"))
	if err != nil || !strings.Contains(string(exported), `"logdist"`) {
		t.Errorf("export's config.json names no logdist scheme: %v\n%s", err, exported)
	}
	imported := filepath.Join(tmp, "imported.ckpt")
	run("import", "-export", filepath.Join(tmp, "export"), "-out", imported)
	if got := run("eval", "-checkpoint", imported, "-lengths", "16,32", "-out", filepath.Join(tmp, "eval_imported"), "-quiet"); !sameTable(got, run("eval", "-checkpoint", ckpt, "-lengths", "16,32", "-out", filepath.Join(tmp, "eval_again"), "-quiet")) {
		t.Errorf("eval of the imported checkpoint:\n%s", got)
	}
	run("bench", "-config", "tiny", "-scheme", "logdist", "-steps", "2", "-warmup", "1")
	loaderAgrees(t, root, tmp, filepath.Join(tmp, "eval", "ppl_by_scaling.json"), filepath.Join(tmp, "export"))

	code, stdout, stderr := cmdtest.Run(t, filepath.Join(plain, "eval"), tmp, "-checkpoint", ckpt, "-quiet")
	if code != 2 || stdout != "" || strings.Count(strings.TrimSpace(stderr), "\n") != 0 ||
		!strings.Contains(stderr, `unknown scheme "logdist"`) || !strings.Contains(stderr, "plugins/plugins.go") {
		t.Errorf("eval built without the scheme, on its checkpoint: exit %d, stdout %q, stderr %q; want exit 2 and one line naming the scheme and plugins/plugins.go", code, stdout, stderr)
	}
}

// sameTable reports whether two outputs of eval give the same perplexity table: the lines
// before the one on memory, which depends on what the machine has free.
func sameTable(a, b string) bool {
	table := func(s string) string { return s[:max(0, strings.Index(s, "evaluated in "))] }
	return table(a) != "" && table(a) == table(b)
}

// python is the interpreter the loader runs with: Debian's, where python3-torch installs torch.
const python = "/usr/bin/python3"

// loaderAgrees runs pytorch/load.py on the export with docs/export.md's logdist.py as a plugin
// and checks its losses against cmd/eval's, in the file evalJSON, within the 2·10⁻⁶ relative of
// cmd/export's loader test (the Go model computes in float32, the loader in float64). Without
// torch it skips, unless CI is set.
func loaderAgrees(t *testing.T, root, tmp, evalJSON, export string) {
	t.Helper()
	if err := exec.Command(python, "-c", "import torch").Run(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI is set and %s cannot import torch (%v): install python3-torch", python, err)
		}
		t.Logf("the loader is not checked: %s cannot import torch (%v)", python, err)
		return
	}
	doc, err := os.ReadFile(filepath.Join(root, "docs", "export.md"))
	if err != nil {
		t.Fatal(err)
	}
	plugin := filepath.Join(tmp, "logdist.py")
	writeFile(t, plugin, block(t, string(doc), "python", "# logdist.py"))
	loader := filepath.Join(root, "pytorch", "load.py")
	cmd := exec.Command(python, loader, export, "--plugin", plugin, "--lengths", "16,32", "--scaling", "none", "--dtype", "float64", "--json")
	got, err := cmd.Output()
	if err != nil {
		t.Fatalf("load.py --plugin %s: %v\n%s", plugin, err, stderrOf(err))
	}
	var loaded []struct{ Results []result }
	if err := json.Unmarshal(got, &loaded); err != nil || len(loaded) != 1 {
		t.Fatalf("load.py's JSON %q: %v", got, err)
	}
	b, err := os.ReadFile(evalJSON)
	if err != nil {
		t.Fatal(err)
	}
	var want struct{ Results []result }
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	g, w := losses(loaded[0].Results), losses(want.Results)
	if len(w) != 2 || len(g) != len(w) {
		t.Fatalf("losses by length: load.py %v, cmd/eval %v", g, w)
	}
	for n, x := range w {
		if rel := math.Abs(g[n]-x) / x; !(rel <= 2e-6) {
			t.Errorf("length %d: cmd/eval loss %.7f, load.py %.7f (relative %.2g)", n, x, g[n], rel)
		}
	}
	// Without the plugin the loader names the scheme it lacks, in one line, and exits 2.
	out, err := exec.Command(python, loader, export, "--lengths", "16").CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 2 || strings.Count(strings.TrimSpace(string(out)), "\n") != 0 ||
		!strings.Contains(string(out), "'logdist'") || !strings.Contains(string(out), "--plugin") {
		t.Errorf("load.py without the plugin: %v, %q; want exit 2 and one line naming logdist and --plugin", err, out)
	}
}

// result is a scaling's losses by length, as cmd/eval and load.py write them.
type result struct {
	Scaling string `json:"scaling"`
	Lengths []struct {
		Length int      `json:"length"`
		Loss   *float64 `json:"loss"`
	} `json:"lengths"`
}

// losses are the losses of the scaling none by length.
func losses(rs []result) map[int]float64 {
	m := map[int]float64{}
	for _, r := range rs {
		for _, l := range r.Lengths {
			if r.Scaling == "none" && l.Loss != nil {
				m[l.Length] = *l.Loss
			}
		}
	}
	return m
}

func stderrOf(err error) string {
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return string(exit.Stderr)
	}
	return ""
}

// checkHelp runs a command with -h: exit 0, a synopsis naming the command on the first line, and
// every flag with its description, as each of the seven gives them.
func checkHelp(t *testing.T, binary, name string) {
	t.Helper()
	code, stdout, stderr := cmdtest.Run(t, binary, "", "-h")
	out := stdout + stderr
	flags := strings.Count(out, "\n  -")
	if code != 0 || !strings.HasPrefix(out, "usage: "+name+" ") || flags < 3 {
		t.Errorf("%s -h: exit %d, %d flags listed, output starting %q; want 0, a synopsis and every flag", name, code, flags, out[:min(len(out), 60)])
	}
}

// userOverlay writes what a user following the README adds, the scheme's file and the import
// line, into tmp, and returns a build overlay that places them in the tree at root.
func userOverlay(t *testing.T, root, tmp string) string {
	t.Helper()
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	scheme := block(t, string(readme), "go", "package logdist")
	plugins, err := os.ReadFile(filepath.Join(root, "plugins", "plugins.go"))
	if err != nil {
		t.Fatal(err)
	}
	withLine := strings.Replace(string(plugins), "\nimport (\n", "\nimport (\n\t_ \"extrapolate/logdist\"\n", 1)
	if withLine == string(plugins) {
		t.Fatal("plugins/plugins.go has no import block to add a line to")
	}
	files := map[string]string{
		filepath.Join(root, "logdist", "logdist.go"): scheme,
		filepath.Join(root, "plugins", "plugins.go"): withLine,
	}
	replace := map[string]string{}
	for dst, text := range files {
		src := filepath.Join(tmp, filepath.Base(filepath.Dir(dst))+".go")
		writeFile(t, src, text)
		replace[dst] = src
	}
	b, err := json.Marshal(map[string]any{"Replace": replace})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(tmp, "overlay.json")
	writeFile(t, path, string(b))
	return path
}

// block returns the code block of the language lang, in the Markdown text md, whose first line
// starts with first.
func block(t *testing.T, md, lang, first string) string {
	t.Helper()
	_, rest, ok := strings.Cut(md, "```"+lang+"\n"+first)
	code, _, closed := strings.Cut(rest, "```")
	if !ok || !closed {
		t.Fatalf("no %s block starting %q", lang, first)
	}
	return first + code
}

// build compiles the commands named into dir, with the go flags given.
func build(t *testing.T, root, dir string, flags, names []string) {
	t.Helper()
	args := append([]string{"build", "-o", dir + string(filepath.Separator)}, flags...)
	for _, n := range names {
		args = append(args, "./cmd/"+n)
	}
	cmd := exec.Command("go", args...)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}
