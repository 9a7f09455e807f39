package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"extrapolate/data"
	"extrapolate/experiments/config"
	"extrapolate/experiments/measure"
	"extrapolate/experiments/training"
	"extrapolate/internal/cmdtest"
	"extrapolate/model"
	"extrapolate/position"
)

var binary string

func TestMain(m *testing.M) { cmdtest.Main(m, "sample", &binary) }

func runSample(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	return cmdtest.Run(t, binary, "", args...)
}

// trainLen is the training length of the test's checkpoints: the texts below go past it.
const trainLen = 16

// checkpoint trains a tiny model with the given scheme for steps steps (0: interrupted at its
// start, saved before training finished) and returns its checkpoint.
func checkpoint(t *testing.T, scheme string, steps int) string {
	t.Helper()
	dir := t.TempDir()
	c := config.Default()
	c.Name = "tiny"
	c.Data = data.Config{Corpus: "text", Path: cmdtest.TextCorpus(t)}
	c.Model.DModel, c.Model.Layers, c.Model.Heads = 16, 1, 2
	c.Position = position.Config{Scheme: scheme}
	c.Train.SeqLen, c.Train.BatchSize, c.Train.Steps = trainLen, 4, max(steps, 10)
	c.Eval = config.Eval{Lengths: []int{16, 32}, Tokens: 256, BatchTokens: 256}
	if err := c.Complete(); err != nil {
		t.Fatal(err)
	}
	rc, err := c.Resolve()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if steps == 0 {
		cancel()
	}
	r := &training.Run{Resolved: rc, Dir: filepath.Join(dir, "run")}
	if _, err := r.Execute(ctx); err != nil && !(steps == 0 && errors.Is(err, measure.ErrInterrupted)) {
		t.Fatal(err)
	}
	return filepath.Join(r.Dir, measure.CheckpointFile)
}

// step is what the model predicts after a prefix of a text: the logits of its last position
// and the byte of largest logit, as model.Argmax reads it.
type step struct {
	logits []float32
	argmax int
}

// steps recomputes, independently of the command, the prediction after every prefix of text
// that is at least prompt bytes long, with the checkpoint's own weights under scaling (nil:
// none).
func steps(t *testing.T, ckpt string, scaling *position.Scaling, text string, prompt int) []step {
	t.Helper()
	tr, err := training.LoadCheckpoint(ckpt)
	if err != nil {
		t.Fatal(err)
	}
	c := tr.Config()
	pc := c.Position
	pc.Scaling = scaling
	s, err := position.New(c.Spec(pc))
	if err != nil {
		t.Fatal(err)
	}
	var out []step
	for n := prompt; n < len(text); n++ {
		g, err := tr.Model.Graph(s, 1, n, model.Options{})
		if err != nil {
			t.Fatal(err)
		}
		for i := range n {
			g.IDs[i] = int(text[i])
		}
		if _, err := g.Run(); err != nil {
			t.Fatal(err)
		}
		v := g.Logits().Shape()[1]
		logits := append([]float32(nil), g.Logits().Data().([]float32)[(n-1)*v:n*v]...)
		out = append(out, step{logits, model.Argmax(g.Logits(), n-1)})
		g.Close()
	}
	return out
}

func TestSameSeedSameText(t *testing.T) {
	ckpt := checkpoint(t, "rope", 10)
	sample := func(seed string) string {
		code, stdout, stderr := runSample(t, "-checkpoint", ckpt, "-prompt", "func f(x int)", "-n", "40", "-seed", seed)
		if code != 0 {
			t.Fatalf("seed %s: exit %d: %s", seed, code, stderr)
		}
		if !strings.HasPrefix(stdout, "func f(x int)") || len(stdout) != len("func f(x int)")+40 {
			t.Fatalf("seed %s: %q is not the prompt and 40 bytes", seed, stdout)
		}
		return stdout
	}
	a, b, c := sample("7"), sample("7"), sample("8")
	if a != b {
		t.Errorf("seed 7 twice: %q and %q", a, b)
	}
	if a == c {
		t.Errorf("seeds 7 and 8 both gave %q", a)
	}
}

// TestGreedyIsArgmax checks that -temperature 0 and -top-k 1 both write, past the training
// length and under a scaling, the byte of largest logit at every step, as computed here.
func TestGreedyIsArgmax(t *testing.T) {
	ckpt := checkpoint(t, "rope", 10)
	const prompt = "func fa(x int)"
	args := []string{"-checkpoint", ckpt, "-prompt", prompt, "-n", "30", "-scaling", "yarn", "-factor", "2"}
	code, greedy, stderr := runSample(t, append(args, "-temperature", "0")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	want := fmt.Sprintf("sample: rope yarn(factor=2) scheme, trained at %d tokens; %d prompt bytes + 30 generated = %d, %.3gx the training length", trainLen, len(prompt), len(prompt)+30, float64(len(prompt)+30)/trainLen)
	if strings.TrimSpace(stderr) != want {
		t.Errorf("stderr %q, want %q", stderr, want)
	}
	// The summary starts a line of its own after a text that does not end one.
	if ended := strings.HasSuffix(greedy, "\n"); strings.HasPrefix(stderr, "\n") == ended {
		t.Errorf("text ending %q, stderr %q: want a newline before the summary exactly when the text has none", greedy[len(greedy)-1:], stderr)
	}
	code, top1, stderr := runSample(t, append(args, "-top-k", "1", "-seed", "5")...)
	if code != 0 {
		t.Fatalf("-top-k 1: exit %d: %s", code, stderr)
	}
	if top1 != greedy {
		t.Errorf("-top-k 1 wrote %q, -temperature 0 %q", top1, greedy)
	}
	yarn := &position.Scaling{Type: "yarn", Factor: position.Factor{Value: 2}}
	for i, st := range steps(t, ckpt, yarn, greedy, len(prompt)) {
		if got, want := int(greedy[len(prompt)+i]), st.argmax; got != want {
			t.Fatalf("byte %d: wrote %q, the largest logit is %q's", i, rune(got), rune(want))
		}
	}
}

// TestTopKStaysInTopK checks that with -top-k 3 every byte written is one of the 3 of largest
// logit at its step, as computed here, and that the draws are not all the most likely byte.
func TestTopKStaysInTopK(t *testing.T) {
	ckpt := checkpoint(t, "alibi", 10)
	const prompt = "func"
	code, text, stderr := runSample(t, "-checkpoint", ckpt, "-prompt", prompt, "-n", "40", "-top-k", "3", "-temperature", "2", "-seed", "3")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	notTop := 0
	for i, st := range steps(t, ckpt, nil, text, len(prompt)) {
		b := text[len(prompt)+i]
		above := 0 // logits larger than the written byte's
		for _, x := range st.logits {
			if x > st.logits[b] {
				above++
			}
		}
		if above >= 3 {
			t.Errorf("byte %d: wrote %q, with %d logits above its own", i, b, above)
		}
		if above > 0 {
			notTop++
		}
	}
	if notTop == 0 {
		t.Errorf("every byte of %q was the most likely one: the draws look greedy", text)
	}
}

func TestPromptFile(t *testing.T) {
	ckpt := checkpoint(t, "nope", 10)
	file := filepath.Join(t.TempDir(), "prompt.txt")
	os.WriteFile(file, []byte("func f(x int)\n"), 0o644)
	_, fromFile, _ := runSample(t, "-checkpoint", ckpt, "-prompt-file", file, "-n", "20")
	code, fromFlag, stderr := runSample(t, "-checkpoint", ckpt, "-prompt", "func f(x int)\n", "-n", "20")
	if code != 0 || fromFile != fromFlag {
		t.Errorf("exit %d (%s); -prompt-file wrote %q, -prompt %q", code, stderr, fromFile, fromFlag)
	}
}

// TestSampleBadInput checks that every bad input is refused with exit 2 and one line naming the
// flag or file, before anything is written to stdout.
func TestSampleBadInput(t *testing.T) {
	rope := checkpoint(t, "rope", 10)
	alibi := checkpoint(t, "alibi", 10)
	learned := checkpoint(t, "learned", 10)
	mid := checkpoint(t, "rope", 0)
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.txt")
	os.WriteFile(empty, nil, 0o644)
	fifo := filepath.Join(dir, "pipe.txt")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	p := []string{"-prompt", "func"}
	cases := []struct {
		args []string
		want string
	}{
		{p, "-checkpoint: no checkpoint given"},
		{append([]string{"-checkpoint", filepath.Join(dir, "none.ckpt")}, p...), "none.ckpt"},
		{append([]string{"-checkpoint", rope, "-temperature", "-1"}, p...), "-temperature: -1"},
		{append([]string{"-checkpoint", rope, "-temperature", "NaN"}, p...), "-temperature: NaN"},
		{append([]string{"-checkpoint", rope, "-temperature", "hot"}, p...), "-temperature"},
		{append([]string{"-checkpoint", rope, "-top-k", "-1"}, p...), "-top-k: -1"},
		{append([]string{"-checkpoint", rope, "-n", "0"}, p...), "-n: 0"},
		{append([]string{"-checkpoint", rope, "-n", "-5"}, p...), "-n: -5"},
		{append([]string{"-checkpoint", rope, "-n", "many"}, p...), "-n"},
		{append([]string{"-checkpoint", rope, "-n", "4093"}, p...), "-n: 4 prompt bytes and 4093 new ones make 4097"},
		{append([]string{"-checkpoint", rope, "-n", "5000"}, p...), "-n: 5000, more than the 4096 bytes"},
		{append([]string{"-checkpoint", rope, "-n", "9223372036854775807"}, p...), "-n: 9223372036854775807, more than the 4096 bytes"},
		{append([]string{"-checkpoint", rope, "-scaling", "longrope"}, p...), "-scaling longrope: position.scaling.type"},
		{append([]string{"-checkpoint", rope, "-scaling", ""}, p...), "-scaling: empty value"},
		{append([]string{"-checkpoint", rope, "-scaling", "none,yarn"}, p...), "-scaling none,yarn"},
		{append([]string{"-checkpoint", alibi, "-scaling", "yarn"}, p...), "-scaling yarn"},
		{append([]string{"-checkpoint", rope, "-beta-fast", "2"}, p...), "-beta-fast"},
		{append([]string{"-checkpoint", rope, "-scaling", "yarn", "-factor", "0.5"}, p...), "position.scaling.factor"},
		{append([]string{"-checkpoint", rope, "-factor", "big"}, p...), "-factor"},
		{[]string{"-checkpoint", rope}, "-prompt: no prompt"},
		{[]string{"-checkpoint", rope, "-prompt", ""}, "-prompt: empty"},
		{[]string{"-checkpoint", rope, "-prompt", "x", "-prompt-file", empty}, "-prompt and -prompt-file"},
		{[]string{"-checkpoint", rope, "-prompt-file", filepath.Join(dir, "none.txt")}, "-prompt-file: "},
		{[]string{"-checkpoint", rope, "-prompt-file", empty}, "-prompt-file " + empty + ": empty"},
		{[]string{"-checkpoint", rope, "-prompt-file", fifo}, "-prompt-file: " + fifo + ": not a regular file"},
		{append([]string{"-checkpoint", learned, "-n", "13"}, p...), "-n: 4 prompt bytes and 13 new ones make 17 positions, which the learned scheme cannot take"},
		{append([]string{"-checkpoint", mid}, p...), "train step 0 of 10"},
		{append([]string{"-checkpoint", rope, "extra"}, p...), "unexpected argument \"extra\""},
	}
	for _, c := range cases {
		code, stdout, stderr := runSample(t, c.args...)
		msg := strings.TrimSpace(stderr)
		if code != 2 || !strings.Contains(msg, c.want) || strings.Contains(msg, "\n") || strings.Contains(msg, "panic") {
			t.Errorf("%q: exit %d, stderr %q; want 2 and one line naming %q", c.args, code, msg, c.want)
		}
		if stdout != "" {
			t.Errorf("%q: wrote %q", c.args, stdout)
		}
	}
	// Learned positions up to their table, and a partly trained model on purpose, are fine.
	if code, stdout, stderr := runSample(t, append([]string{"-checkpoint", learned, "-n", "12"}, p...)...); code != 0 || len(stdout) != 16 {
		t.Errorf("learned, 16 positions: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	code, _, stderr := runSample(t, append([]string{"-checkpoint", mid, "-partial", "-n", "5"}, p...)...)
	if code != 0 || !strings.Contains(stderr, "partly: saved at train step 0 of 10") {
		t.Errorf("-partial: exit %d, stderr %q; want 0 and the step", code, stderr)
	}
}
