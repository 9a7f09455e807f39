package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"extrapolate/experiments/training"
	"extrapolate/internal/cmdtest"
)

var binary string

func TestMain(m *testing.M) { cmdtest.Main(m, "train", &binary) }

// runTrain runs the train command in dir and returns its exit code and output.
func runTrain(t *testing.T, dir string, args ...string) (int, string, string) {
	t.Helper()
	return cmdtest.Run(t, binary, dir, args...)
}

// A valid small config, which each case below breaks in one way.
const good = `name: tiny
seed: 1
data: {corpus: text, path: corpus.txt}
model: {d_model: 16, layers: 1, heads: 2}
position: {scheme: rope}
train: {seq_len: 8, batch_size: 2, steps: 3, lr: 1.0e-3, warmup: 1}
eval: {lengths: [8, 16], tokens: 64, batch_tokens: 64}
`

// goodText is the corpus of the bad-input cases: text, long enough for the base config.
var goodText = strings.Repeat("The quick brown fox jumps over the lazy dog. ", 40)

// badInput is one case of TestBadInput: a config or flags that train must refuse.
type badInput struct {
	name   string
	config string // replaces the whole config when it has no "name:" to edit
	edit   [2]string
	args   []string
	files  map[string]string
	// fifos are named pipes to create, symlinks links to make (name: target).
	fifos    []string
	symlinks map[string]string
	want     string
	// notWant must not be in the message.
	notWant string
}

// badInputs are TestBadInput's cases, built when it runs: some hold megabytes of text.
func badInputs() []badInput {
	return []badInput{
		{name: "unknown key", edit: [2]string{"steps: 3", "steps: 3, stpes: 4"}, want: "train.stpes"},
		{name: "unknown section", edit: [2]string{"seed: 1", "seed: 1\noptimizer: {lr: 1}"}, want: "optimizer"},
		{name: "wrong type", edit: [2]string{"steps: 3", "steps: many"}, want: "train.steps"},
		{name: "wrong type list", edit: [2]string{"lengths: [8, 16]", "lengths: 8"}, want: "eval.lengths"},
		{name: "duplicate key", edit: [2]string{"seed: 1", "seed: 1\nseed: 2"}, want: "seed"},
		{name: "unknown scheme", edit: [2]string{"scheme: rope", "scheme: nonesuch"}, want: "position.scheme"},
		{name: "unknown normaliser", edit: [2]string{"seed: 1", "seed: 1\nattention: {normaliser: softmin}"}, want: "attention.normaliser"},
		{name: "softpick with forget gates", edit: [2]string{"scheme: rope}", "scheme: fox}\nattention: {normaliser: softpick}"}, args: []string{"-check"}, want: "attention.normaliser: softpick not with the fox scheme"},
		{name: "softpick with stick-breaking", edit: [2]string{"scheme: rope}", "scheme: stickbreaking}\nattention: {normaliser: softpick}"}, args: []string{"-check"}, want: "attention.normaliser: softpick replaces the softmax"},
		{name: "sinks with FoX", edit: [2]string{"scheme: rope}", "scheme: fox}\nattention: {sinks: true}"}, args: []string{"-check"}, want: "attention.sinks: not with the fox scheme"},
		{name: "unknown gate", edit: [2]string{"seed: 1", "seed: 1\nattention: {gate: sideways}"}, want: "attention.gate"},
		{name: "zero steps", edit: [2]string{"steps: 3", "steps: 0"}, want: "train.steps"},
		{name: "negative batch", edit: [2]string{"batch_size: 2", "batch_size: -2"}, want: "train.batch_size"},
		{name: "zero d_model", edit: [2]string{"d_model: 16", "d_model: 0"}, want: "model.d_model"},
		{name: "heads do not divide", edit: [2]string{"heads: 2", "heads: 3"}, want: "model.heads"},
		{name: "odd RoPE head", edit: [2]string{"d_model: 16, layers: 1, heads: 2", "d_model: 12, layers: 1, heads: 4"}, want: "head dimension"},
		{name: "missing corpus", edit: [2]string{"path: corpus.txt", "path: nowhere.txt"}, want: "data.path"},
		{name: "empty corpus", edit: [2]string{"path: corpus.txt", "path: empty.txt"}, files: map[string]string{"empty.txt": ""}, want: "data.path"},
		{name: "binary corpus", edit: [2]string{"path: corpus.txt", "path: bin.dat"}, files: map[string]string{"bin.dat": "\x00\x01\x02\xff\xfe\x00"}, want: "data.path"},
		{name: "corpus shorter than a window", edit: [2]string{"path: corpus.txt", "path: short.txt"}, files: map[string]string{"short.txt": "tiny text\n"}, want: "data"},
		{name: "unknown corpus", edit: [2]string{"corpus: text", "corpus: wiki"}, want: "data.corpus"},
		{name: "length not dividing tokens", edit: [2]string{"lengths: [8, 16]", "lengths: [8, 24]"}, want: "eval.lengths"},
		{name: "lengths out of order", edit: [2]string{"lengths: [8, 16]", "lengths: [16, 8]"}, want: "eval.lengths"},
		{name: "zero length", edit: [2]string{"lengths: [8, 16]", "lengths: [0, 8]"}, want: "eval.lengths"},
		{name: "no lengths", edit: [2]string{"lengths: [8, 16]", "lengths: []"}, want: "eval.lengths"},
		{name: "more tokens than validation", edit: [2]string{"tokens: 64", "tokens: 65536"}, want: "eval.tokens"},
		{name: "scaling on alibi", edit: [2]string{"scheme: rope", "scheme: alibi, scaling: {type: ntk, factor: 2}"}, want: "position.scaling"},
		{name: "factor below one", edit: [2]string{"scheme: rope", "scheme: rope, scaling: {type: ntk, factor: 0.5}"}, want: "position.scaling.factor"},
		{name: "factor not a number", edit: [2]string{"scheme: rope", "scheme: rope, scaling: {type: ntk, factor: big}"}, want: "factor"},
		{name: "beta_fast below beta_slow", edit: [2]string{"scheme: rope", "scheme: rope, scaling: {type: yarn, factor: 4, beta_fast: 1, beta_slow: 32}"}, want: "position.scaling.beta_fast"},
		{name: "unknown scaling", edit: [2]string{"scheme: rope", "scheme: rope, scaling: {type: longrope, factor: 4}"}, want: "position.scaling.type"},
		{name: "lr", edit: [2]string{"lr: 1.0e-3", "lr: -1"}, want: "train.lr"},
		{name: "finetune shorter", edit: [2]string{"warmup: 1}", "warmup: 1, finetune: {seq_len: 4, steps: 2}}"}, want: "train.finetune.seq_len"},
		{name: "bad name", edit: [2]string{"name: tiny", "name: ../escape"}, want: "name"},
		{name: "not a mapping", config: "- just\n- a list\n", want: "mapping"},
		{name: "empty config", config: "\n", want: "empty"},
		{name: "two documents", config: good + "---\nname: other\n", want: "more than one"},
		{name: "huge config", config: "name: x\n#" + strings.Repeat("x", 2<<20) + "\n", want: "too large"},
		{name: "deeply nested", config: "name: x\nseed: " + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + "\n", want: "depth"},
		{name: "huge batch", edit: [2]string{"batch_size: 2", "batch_size: 4611686018427387904"}, want: "train.batch_size"},
		{name: "huge model", edit: [2]string{"d_model: 16", "d_model: 1048576"}, want: "model.d_model"},
		{name: "huge eval", edit: [2]string{"batch_tokens: 64", "batch_tokens: 1099511627776"}, want: "eval.batch_tokens"},
		{name: "finetune past learned table", edit: [2]string{"scheme: rope", "scheme: learned"}, args: []string{"-set", "train.finetune={seq_len: 16, steps: 2}"}, want: "train.finetune.seq_len"},
		// xPos's key scale at 16 positions, 2^108, leaves float32's safe range; at 8 it is 2^51.
		{name: "xpos scales overflowing float32", edit: [2]string{"scheme: rope", "scheme: xpos, scale_base: 0.25"}, want: "position.scale_base: 0.25 is too small for 16 positions"},
		{name: "bad set", args: []string{"-set", "train.steps"}, want: "-set"},
		{name: "set unknown key", args: []string{"-set", "train.epochs=3"}, want: "train.epochs"},
		{name: "set wrong type", args: []string{"-set", "train.steps=abc"}, want: "train.steps"},
		{name: "unwritable output", args: []string{"-out", "corpus.txt/results"}, want: "results folder"},
		{name: "missing config", args: []string{"-config", "nosuch"}, want: "nosuch"},
		{name: "device corpus", edit: [2]string{"path: corpus.txt", "path: /dev/zero"}, want: "/dev/zero: not a regular file"},
		{name: "FIFO corpus", edit: [2]string{"path: corpus.txt", "path: pipe"}, fifos: []string{"pipe"}, want: "pipe: not a regular file"},
		{name: "FIFO config", args: []string{"-config", "./pipe.yaml"}, fifos: []string{"pipe.yaml"}, want: "pipe.yaml: not a regular file"},
		{name: "binary after text", edit: [2]string{"path: corpus.txt", "path: mixed.txt"}, files: map[string]string{"mixed.txt": goodText + randomBytes(200<<10)}, want: "data.path"},
		{name: "NULs after text", edit: [2]string{"path: corpus.txt", "path: nuls.txt"}, files: map[string]string{"nuls.txt": goodText + strings.Repeat("\x00", 100<<10)}, want: "data.path"},
		{name: "deep and wide model", args: []string{"-set", "model.d_model=8192", "-set", "model.layers=256"}, want: "memory"},
		{name: "wide model, huge batch", args: []string{"-set", "model.d_model=8192", "-set", "train.batch_size=65536"}, want: "memory"},
		{name: "set below a value", args: []string{"-set", "train.steps.x=1"}, want: "train.steps is not a section", notWant: "line 0"},
		{name: "set into a null section", edit: [2]string{"train: {seq_len: 8, batch_size: 2, steps: 3, lr: 1.0e-3, warmup: 1}", "train: null"}, args: []string{"-set", "train.steps=0"}, want: "train.steps: 0, want a positive number"},
		{name: "set unknown key names -set", args: []string{"-set", "train.epochs=3"}, want: "-set", notWant: "line 0"},
		{name: "set a fraction", args: []string{"-set", "train.steps=20.9"}, want: "train.steps: 20.9, want a whole number (from -set train.steps=20.9)"},
		{name: "a fraction in the file", edit: [2]string{"steps: 3", "steps: 3.0"}, want: "train.steps: 3.0, want a whole number (line 6)"},
		{name: "a fraction in a scheme field", edit: [2]string{"position: {scheme: rope}", "position:\n  scheme: t5\n  buckets: 3.5"}, want: "position.buckets: 3.5, want a whole number (line 7)"},
		{name: "a scheme field's line", edit: [2]string{"position: {scheme: rope}", "position:\n  scheme: t5\n  buckets: many"}, want: "position.buckets: cannot unmarshal !!str `many` into int (line 7)", notWant: "line 0"},
		{name: "set empty", args: []string{"-set", "train.steps="}, want: "-set train.steps: empty value"},
		{name: "set nested mix", args: []string{"-set", "position={layers: [{layers: [rope, nope]}]}"}, want: "position.layers[0]: a mix cannot fill a slot of a mix"},
		{name: "dangling symlink output", args: []string{"-out", "link"}, symlinks: map[string]string{"link": "nowhere"}, want: "link"},
	}
}

func TestBadInput(t *testing.T) {
	for _, c := range badInputs() {
		t.Run(c.name, c.run)
	}
}

// run writes the case's config, corpus and other files into a fresh folder, runs train there, and
// requires exit status 2, one line naming what it should, and the folder as it was.
func (c badInput) run(t *testing.T) {
	dir := t.TempDir()
	cfg := c.config
	if cfg == "" {
		cfg = good
		if c.edit[0] != "" {
			if !strings.Contains(cfg, c.edit[0]) {
				t.Fatalf("the base config has no %q", c.edit[0])
			}
			cfg = strings.Replace(cfg, c.edit[0], c.edit[1], 1)
		}
	}
	files := map[string]string{"config.yaml": cfg, "corpus.txt": goodText}
	for k, v := range c.files {
		files[k] = v
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range c.fifos {
		if err := syscall.Mkfifo(filepath.Join(dir, name), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for name, target := range c.symlinks {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	args := append([]string{"-config", "./config.yaml"}, c.args...)
	code, _, stderr := runTrain(t, dir, args...)
	if code != 2 {
		t.Fatalf("exit status %d, want 2; stderr: %s", code, stderr)
	}
	msg := strings.TrimSpace(stderr)
	if strings.Count(msg, "\n") > 0 || !strings.Contains(msg, c.want) || strings.Contains(msg, "panic") {
		t.Fatalf("stderr %q, want one line naming %q", msg, c.want)
	}
	if c.notWant != "" && strings.Contains(msg, c.notWant) {
		t.Fatalf("stderr %q says %q", msg, c.notWant)
	}
	if _, err := os.Stat(filepath.Join(dir, "results")); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("something was written under results/")
	}
	entries, _ := os.ReadDir(dir)
	if want := len(files) + len(c.fifos) + len(c.symlinks); len(entries) != want {
		t.Fatalf("the folder holds %d entries after a failed start, want the %d it had", len(entries), want)
	}
}

// randomBytes returns n bytes of a fixed pseudo-random sequence: binary data, not text.
func randomBytes(n int) string {
	b := make([]byte, n)
	x := uint64(88172645463325252)
	for i := range b {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		b[i] = byte(x)
	}
	return string(b)
}

// TestRun trains the tiny config end to end and checks every output file is there.
func TestRun(t *testing.T) {
	dir := t.TempDir()
	text := strings.Repeat("The quick brown fox jumps over the lazy dog. ", 40)
	os.WriteFile(filepath.Join(dir, "corpus.txt"), []byte(text), 0o644)
	os.MkdirAll(filepath.Join(dir, "configs"), 0o755)
	os.WriteFile(filepath.Join(dir, "configs", "tiny.yaml"), []byte(good), 0o644)
	// A bare name resolves to configs/; -set overrides a field.
	code, stdout, stderr := runTrain(t, dir, "-config", "tiny", "-set", "eval.lengths=[8,16,32]", "-quiet")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, f := range []string{"config.yaml", "train_log.csv", "ppl_vs_len.csv", "ppl_vs_len.json", "ppl_vs_len.png", "ppl_vs_len.svg", "model.ckpt"} {
		if st, err := os.Stat(filepath.Join(dir, "results", "tiny", f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	if !strings.Contains(stdout, "32") {
		t.Errorf("the summary does not show the overridden length 32:\n%s", stdout)
	}
	resolved, _ := os.ReadFile(filepath.Join(dir, "results", "tiny", "config.yaml"))
	if !strings.Contains(string(resolved), "- 32") {
		t.Errorf("the resolved config does not hold the override:\n%s", resolved)
	}
}

// setup writes a corpus and a config into a fresh folder.
func setup(t *testing.T, config string) string {
	t.Helper()
	dir := t.TempDir()
	text := strings.Repeat("The quick brown fox jumps over the lazy dog. ", 40)
	os.WriteFile(filepath.Join(dir, "corpus.txt"), []byte(text), 0o644)
	os.WriteFile(filepath.Join(dir, "config.yaml"), []byte(config), 0o644)
	return dir
}

// losses returns the loss column of a training log.
func losses(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n")[1:] {
		f := strings.Split(line, ",")
		out = append(out, f[0]+","+f[2])
	}
	return out
}

// TestInterruptAndResume stops a training run with SIGINT, as Ctrl-C does, resumes it with the
// command the message gives, and compares its losses with an uninterrupted run's.
func TestInterruptAndResume(t *testing.T) {
	cfg := strings.Replace(good, "steps: 3,", "steps: 10000, log_every: 1,", 1)
	dir := setup(t, cfg)
	code, _, stderr := runTrain(t, dir, "-config", "./config.yaml", "-out", "whole", "-quiet")
	if code != 0 {
		t.Fatalf("uninterrupted run: %d %s", code, stderr)
	}
	want := losses(t, filepath.Join(dir, "whole", "train_log.csv"))

	cmd := exec.Command(binary, "-config", "./config.yaml", "-out", "cut", "-quiet")
	cmd.Dir = dir
	var errBuf bytes.Buffer
	cmd.Stderr = &errBuf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Wait until training is under way, then interrupt.
	for i := 0; i < 500; i++ {
		if _, err := os.Stat(filepath.Join(dir, "cut", "config.yaml")); err == nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond)
	cmd.Process.Signal(os.Interrupt)
	err := cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 130 {
		t.Fatalf("interrupted run: %v, want exit status 130; stderr: %s", err, errBuf.String())
	}
	msg := errBuf.String()
	if !strings.Contains(msg, "checkpoint saved") || !strings.Contains(msg, "resume with: "+binary+" -config ./config.yaml -out cut") {
		t.Fatalf("the message does not say how to resume:\n%s", msg)
	}
	if _, err := os.Stat(filepath.Join(dir, "cut", "ppl_vs_len.json")); err == nil {
		t.Fatal("the interrupted run wrote results")
	}
	code, _, stderr = runTrain(t, dir, "-config", "./config.yaml", "-out", "cut", "-quiet")
	if code != 0 {
		t.Fatalf("resumed run: %d %s", code, stderr)
	}
	got := losses(t, filepath.Join(dir, "cut", "train_log.csv"))
	if len(got) != len(want) {
		t.Fatalf("resumed log has %d rows, uninterrupted %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("step,loss: resumed %s, uninterrupted %s", got[i], want[i])
		}
	}
}

// TestSecondInterruptQuits sends two interrupts: the command quits at once, and whatever
// checkpoint is on disk is whole.
func TestSecondInterruptQuits(t *testing.T) {
	cfg := strings.Replace(good, "steps: 3,", "steps: 100000, checkpoint_every: 50,", 1)
	dir := setup(t, cfg)
	cmd := exec.Command(binary, "-config", "./config.yaml", "-out", "out", "-quiet")
	cmd.Dir = dir
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond)
	cmd.Process.Signal(os.Interrupt)
	cmd.Process.Signal(os.Interrupt)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		t.Fatal("two interrupts did not stop the command")
	}
	// Whatever checkpoint is on disk is whole.
	path := filepath.Join(dir, "out", "model.ckpt")
	if _, err := os.Stat(path); err == nil {
		if _, err := training.LoadCheckpoint(path); err != nil {
			t.Fatalf("the checkpoint left by two interrupts: %v", err)
		}
	}
}

func TestFinishedRunNotReplaced(t *testing.T) {
	dir := setup(t, good)
	if code, _, stderr := runTrain(t, dir, "-config", "./config.yaml", "-out", "out", "-quiet"); code != 0 {
		t.Fatal(stderr)
	}
	before, _ := os.ReadFile(filepath.Join(dir, "out", "ppl_vs_len.json"))
	code, _, stderr := runTrain(t, dir, "-config", "./config.yaml", "-out", "out", "-quiet", "-set", "train.steps=4")
	if code != 2 || !strings.Contains(stderr, "-overwrite") || !strings.Contains(stderr, "train.steps") {
		t.Fatalf("exit %d, stderr %q: want a refusal naming train.steps and -overwrite", code, stderr)
	}
	after, _ := os.ReadFile(filepath.Join(dir, "out", "ppl_vs_len.json"))
	if string(before) != string(after) {
		t.Fatal("the finished run's results changed")
	}
	if code, _, stderr := runTrain(t, dir, "-config", "./config.yaml", "-out", "out", "-quiet", "-set", "train.steps=4", "-overwrite"); code != 0 {
		t.Fatalf("with -overwrite: %d %s", code, stderr)
	}
}

// TestDivergedRunFails checks the command's side of a diverging run: non-zero exit, one line
// naming the step, results marked failed.
func TestDivergedRunFails(t *testing.T) {
	cfg := strings.Replace(good, "lr: 1.0e-3, warmup: 1", "lr: 1.0e+30, min_lr: 1.0e+29, warmup: 0, grad_clip: 0", 1)
	dir := setup(t, cfg)
	code, _, stderr := runTrain(t, dir, "-config", "./config.yaml", "-out", "out", "-quiet", "-set", "train.steps=50")
	msg := strings.TrimSpace(stderr)
	if code != 1 || !strings.Contains(msg, "diverged") || !strings.Contains(msg, "step") || strings.Contains(msg, "\n") {
		t.Fatalf("exit %d, stderr %q: want 1 and one line naming the step", code, msg)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "out", "ppl_vs_len.json"))
	if !strings.Contains(string(b), `"status": "failed"`) {
		t.Fatalf("results not marked failed:\n%s", b)
	}
}

// TestMisspelledConfig: a config name that names no file in configs/ gets the nearest name and
// the list, in one line, exit 2, run from the repository's root as the README has it.
func TestMisspelledConfig(t *testing.T) {
	code, _, stderr := runTrain(t, filepath.Join("..", ".."), "-config", "rope_nkt", "-check")
	msg := strings.TrimSpace(stderr)
	if code != 2 || strings.Contains(msg, "\n") || !strings.Contains(msg, "configs/rope_nkt.yaml: no such config; the nearest is rope_ntk (configs: ") {
		t.Errorf("exit %d, stderr %q; want 2 and one line naming rope_ntk and the configs", code, msg)
	}
}

// TestRenamedSchemeNote: a -set that changes the config's scheme, its name left as it is, gets a
// note on stderr naming the folder it writes; with the name set too, none.
func TestRenamedSchemeNote(t *testing.T) {
	dir := setup(t, good)
	_, _, stderr := runTrain(t, dir, "-config", "./config.yaml", "-set", "position.scheme=alibi", "-check")
	if !strings.Contains(stderr, "note: the run keeps the name tiny, and writes results/tiny, with the scheme alibi") {
		t.Errorf("stderr %q, want the note", stderr)
	}
	_, _, stderr = runTrain(t, dir, "-config", "./config.yaml", "-set", "position.scheme=alibi", "-set", "name=tiny_alibi", "-check")
	if strings.Contains(stderr, "note:") {
		t.Errorf("with the name set: stderr %q, want no note", stderr)
	}
}
