package training

import (
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"extrapolate/checkpoint"
	"extrapolate/experiments/config"
	"extrapolate/experiments/internal/testrun"
	"extrapolate/experiments/measure"
	"extrapolate/experiments/measure/perplexity"
	"extrapolate/internal/inputerr"
	"extrapolate/position"
)

// logOf returns a run's training log without its timing columns, which differ between runs.
func logOf(t *testing.T, dir string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, measure.LogFile))
	if err != nil {
		t.Fatal(err)
	}
	var rows []string
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.Split(line, ",")
		rows = append(rows, strings.Join(f[:5], ",")) // step, phase, loss, lr, grad_norm
	}
	return rows
}

// TestResumeReproducesLosses interrupts training at random steps, in the main phase and in
// fine-tuning, resumes each time, and requires the log to match an uninterrupted run's exactly.
func TestResumeReproducesLosses(t *testing.T) {
	c := testrun.Config(t, "rope")
	c.Train.LogEvery = 1
	c.Train.CheckpointEvery = 7
	c.Position.Scaling = &position.Scaling{Type: "yarn", Factor: position.Factor{Value: 2}}
	c.Train.Finetune = &config.Finetune{SeqLen: 32, Steps: 12}
	if err := c.Complete(); err != nil {
		t.Fatal(err)
	}
	whole := &Run{Resolved: testrun.Resolved(t, c), Dir: filepath.Join(t.TempDir(), "whole")}
	if _, err := whole.Execute(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := logOf(t, whole.Dir)

	rng := rand.New(rand.NewPCG(uint64(os.Getpid()), 1))
	dir := filepath.Join(t.TempDir(), "interrupted")
	stops := []struct {
		phase string
		step  int
	}{{phaseTrain, 1 + rng.IntN(c.Train.Steps-2)}, {phaseFinetune, 1 + rng.IntN(c.Train.Finetune.Steps-2)}}
	t.Logf("interrupting at %v", stops)
	for _, stop := range stops {
		ctx, cancel := context.WithCancel(context.Background())
		r := &Run{Resolved: testrun.Resolved(t, c), Dir: dir, afterStep: func(phase string, step int) {
			if phase == stop.phase && step == stop.step {
				cancel()
			}
		}}
		_, err := r.Execute(ctx)
		cancel()
		if !errors.Is(err, measure.ErrInterrupted) {
			t.Fatalf("interrupting at %s step %d: %v", stop.phase, stop.step, err)
		}
		if _, err := os.Stat(filepath.Join(dir, measure.ResultsJSON)); err == nil {
			t.Fatal("an interrupted run wrote results")
		}
	}
	r := &Run{Resolved: testrun.Resolved(t, c), Dir: dir}
	if _, err := r.Execute(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := logOf(t, dir)
	if len(got) != len(want) {
		t.Fatalf("resumed log has %d rows, uninterrupted %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("row %d: resumed %s, uninterrupted %s", i, got[i], want[i])
		}
	}
	// The results too.
	a, _ := os.ReadFile(filepath.Join(dir, perplexity.RunCSV))
	b, _ := os.ReadFile(filepath.Join(whole.Dir, perplexity.RunCSV))
	if string(a) != string(b) {
		t.Fatalf("results differ:\n%s\n%s", a, b)
	}
}

// TestDivergenceStops trains with an absurd learning rate: the run must stop with an error
// naming the step, keep its last good checkpoint, and record itself as failed.
func TestDivergenceStops(t *testing.T) {
	c := testrun.Config(t, "alibi")
	c.Train.LR, c.Train.CheckpointEvery, c.Train.GradClip = 1e30, 2, 0
	zero := 0
	c.Train.Warmup = &zero
	min := 1e29
	c.Train.MinLR = &min
	if err := c.Complete(); err != nil {
		t.Fatal(err)
	}
	r := &Run{Resolved: testrun.Resolved(t, c), Dir: filepath.Join(t.TempDir(), "nan")}
	res, err := r.Execute(context.Background())
	if !errors.Is(err, ErrDiverged) {
		t.Fatalf("error %v, want ErrDiverged", err)
	}
	if !strings.Contains(err.Error(), "step") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("error %q should be one line naming the step", err)
	}
	if res == nil || res.Status != "failed" {
		t.Fatalf("result %+v, want status failed", res)
	}
	b, err := os.ReadFile(filepath.Join(r.Dir, measure.ResultsJSON))
	if err != nil || !strings.Contains(string(b), `"status": "failed"`) {
		t.Fatalf("results file: %v\n%s", err, b)
	}
	// The checkpoint, if one was saved before the divergence, is whole and finite.
	if _, err := os.Stat(filepath.Join(r.Dir, measure.CheckpointFile)); err == nil {
		meta, byName, err := readCheckpoint(filepath.Join(r.Dir, measure.CheckpointFile))
		if err != nil {
			t.Fatalf("the kept checkpoint: %v", err)
		}
		if meta.State.Step == 0 {
			t.Fatal("checkpoint at step 0")
		}
		for name, x := range byName {
			for _, v := range x.Data().([]float32) {
				if v != v {
					t.Fatalf("the kept checkpoint has NaN in %s", name)
				}
			}
		}
	}
}

// TestFreshStartRemovesStaleResults reruns a folder with a changed config and interrupts it:
// the old config's results must be gone, so nothing can take them for the new config's.
func TestFreshStartRemovesStaleResults(t *testing.T) {
	c := testrun.Config(t, "alibi")
	dir := filepath.Join(t.TempDir(), "run")
	if _, err := (&Run{Resolved: testrun.Resolved(t, c), Dir: dir}).Execute(context.Background()); err != nil {
		t.Fatal(err)
	}
	c.Train.Steps = 31
	if err := c.Complete(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &Run{Resolved: testrun.Resolved(t, c), Dir: dir, Overwrite: true, afterStep: func(_ string, step int) {
		if step == 3 {
			cancel()
		}
	}}
	if _, err := r.Execute(ctx); !errors.Is(err, measure.ErrInterrupted) {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, measure.ResultsJSON)); err == nil {
		t.Fatal("the old config's results survived a fresh start")
	}
}

// TestOnlyOwnTempsRemoved starts a run in a folder holding a user's files named like
// temporaries and a temporary file a dead run left: only the latter is the run's to remove.
func TestOnlyOwnTempsRemoved(t *testing.T) {
	dir := t.TempDir()
	mine := []string{".env.tmp", ".x.tmpl", ".notes.tmp1", ".model.ckpt.tmpl", "model.ckpt.tmp1"}
	for _, name := range append(mine, ".model.ckpt.tmp123", ".ppl_vs_len.json.tmp4") {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := (&Run{Resolved: testrun.Resolved(t, testrun.Config(t, "alibi")), Dir: dir}).Execute(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, name := range mine {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("the user's %s: %v", name, err)
		}
	}
	for _, name := range []string{".model.ckpt.tmp123", ".ppl_vs_len.json.tmp4"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			t.Errorf("the stale temporary %s was kept", name)
		}
	}
}

// TestRunFilesComplete checks the one list of the files a run owns against what a run writes:
// a file missing from it would be neither protected by the folder check nor cleaned up.
func TestRunFilesComplete(t *testing.T) {
	dir := t.TempDir()
	c := testrun.Config(t, "rope")
	for _, m := range measure.All() {
		if _, ok := m.(measure.Selector); !ok {
			c.Eval.Measures = append(c.Eval.Measures, m.Name()) // every measure a config can ask for
		}
	}
	if len(c.Eval.Measures) == 0 {
		t.Fatal("no measure to ask for: attention is one")
	}
	if _, err := (&Run{Resolved: testrun.Resolved(t, c), Dir: dir}).Execute(context.Background()); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if !isRunFile(e.Name()) {
			t.Errorf("a run wrote %s, which runFiles does not list", e.Name())
		}
	}
}

// TestForeignFilesNotReplaced starts runs in folders holding files a run would write but that
// are not a run's of this config: a config.yaml written by hand or of another config alone, a
// run's file without any config.yaml. Each is refused without Overwrite, naming the folder and
// -overwrite, and left as it was; with Overwrite the run starts.
func TestForeignFilesNotReplaced(t *testing.T) {
	c := testrun.Config(t, "alibi")
	other := c
	other.Train.Steps = 31
	for _, tc := range []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"hand-written config", map[string]string{measure.ConfigFile: "# my settings\nname: mine\n"}, measure.ConfigFile},
		{"another config's", map[string]string{measure.ConfigFile: string(other.Marshal())}, "train.steps"},
		{"a plot without config", map[string]string{perplexity.RunPNG: "my picture"}, perplexity.RunPNG},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, body := range tc.files {
				os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644)
			}
			_, err := (&Run{Resolved: testrun.Resolved(t, c), Dir: dir}).Execute(context.Background())
			if err == nil || !inputerr.Is(err) || !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), "-overwrite") ||
				!strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %v, want one line naming %s, %s and -overwrite", err, dir, tc.want)
			}
			entries, _ := os.ReadDir(dir)
			if len(entries) != len(tc.files) {
				t.Fatalf("the refused run left %d files, want %d", len(entries), len(tc.files))
			}
			for name, body := range tc.files {
				if b, _ := os.ReadFile(filepath.Join(dir, name)); string(b) != body {
					t.Fatalf("the refused run changed %s", name)
				}
			}
			if _, err := (&Run{Resolved: testrun.Resolved(t, c), Dir: dir, Overwrite: true}).Execute(context.Background()); err != nil {
				t.Fatalf("with Overwrite: %v", err)
			}
		})
	}
	// The same config's config.yaml alone is a run that stopped before its first checkpoint:
	// it starts, and the user's other files stay.
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, measure.ConfigFile), c.Marshal(), 0o644)
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("mine"), 0o644)
	if _, err := (&Run{Resolved: testrun.Resolved(t, c), Dir: dir}).Execute(context.Background()); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "notes.txt")); string(b) != "mine" {
		t.Fatal("the run touched notes.txt")
	}
}

// tensorNames lists the tensors of a run folder's checkpoint.
func tensorNames(t *testing.T, dir string) []string {
	t.Helper()
	var meta Meta
	ts, err := checkpoint.Read(filepath.Join(dir, measure.CheckpointFile), &meta)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, x := range ts {
		names = append(names, x.Name)
	}
	return names
}

// TestFinishedCheckpointHoldsWeights checks what a checkpoint keeps: AdamW's moments while
// training can resume, the weights alone once the run is finished, and a finished run run
// again takes its checkpoint as it is.
func TestFinishedCheckpointHoldsWeights(t *testing.T) {
	c := testrun.Config(t, "rope")
	dir := filepath.Join(t.TempDir(), "run")
	ctx, cancel := context.WithCancel(context.Background())
	r := &Run{Resolved: testrun.Resolved(t, c), Dir: dir, afterStep: func(_ string, step int) {
		if step == 2 {
			cancel()
		}
	}}
	if _, err := r.Execute(ctx); !errors.Is(err, measure.ErrInterrupted) {
		t.Fatalf("interrupting: %v", err)
	}
	cancel()
	moments := func(names []string) int {
		n := 0
		for _, name := range names {
			if strings.HasPrefix(name, "adam.") {
				n++
			}
		}
		return n
	}
	mid := tensorNames(t, dir)
	if moments(mid) == 0 || moments(mid) != 2*(len(mid)-moments(mid)) {
		t.Fatalf("interrupted checkpoint %v: want two moments a weight", mid)
	}
	for range 2 { // finish it, then run it again
		r := &Run{Resolved: testrun.Resolved(t, c), Dir: dir}
		if _, err := r.Execute(context.Background()); err != nil {
			t.Fatal(err)
		}
		done := tensorNames(t, dir)
		if moments(done) != 0 || len(done) != len(mid)-moments(mid) {
			t.Fatalf("finished checkpoint %v: want the %d weights alone", done, len(mid)-moments(mid))
		}
	}
}
