package training

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"extrapolate/checkpoint"
	"extrapolate/experiments/config"
	"extrapolate/experiments/internal/testrun"
	"extrapolate/experiments/measure"
	"extrapolate/experiments/measure/perplexity"
	"extrapolate/position"
)

// TestRunWritesResults trains and evaluates a tiny model end to end.
func TestRunWritesResults(t *testing.T) {
	c := testrun.Config(t, "learned")
	r := &Run{Resolved: testrun.Resolved(t, c), Dir: filepath.Join(t.TempDir(), "out")}
	res, err := r.Execute(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != "ok" || len(res.Lengths) != 3 {
		t.Fatalf("result %+v", res)
	}
	if l, _ := res.At(16); !l.Applicable || l.Loss == nil || !(*l.Loss < math.Log(256)) {
		t.Fatalf("at the training length: %+v", l)
	}
	if l, _ := res.At(32); l.Applicable || !strings.Contains(l.Reason, "not applicable") {
		t.Fatalf("learned past max_len: %+v, want not applicable with a reason", l)
	}
	for _, f := range []string{measure.ConfigFile, measure.LogFile, perplexity.RunCSV, measure.ResultsJSON, perplexity.RunPNG, perplexity.RunSVG, measure.CheckpointFile} {
		if _, err := os.Stat(filepath.Join(r.Dir, f)); err != nil {
			t.Error(err)
		}
	}
	// The checkpoint loads back to the same weights.
	tr, err := LoadCheckpoint(filepath.Join(r.Dir, measure.CheckpointFile))
	if err != nil {
		t.Fatal(err)
	}
	if !tr.Finished || tr.Config().Name != c.Name {
		t.Fatalf("checkpoint: finished %v, name %q", tr.Finished, tr.Config().Name)
	}
}

// TestFinetune runs the fine-tuning phase: the log must show its steps at the longer length.
func TestFinetune(t *testing.T) {
	c := testrun.Config(t, "rope")
	c.Position.Scaling = &position.Scaling{Type: "linear", Factor: position.Factor{Value: 2}}
	c.Train.Finetune = &config.Finetune{SeqLen: 32, Steps: 10}
	if err := c.Complete(); err != nil {
		t.Fatal(err)
	}
	r := &Run{Resolved: testrun.Resolved(t, c), Dir: filepath.Join(t.TempDir(), "out")}
	res, err := r.Execute(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if res.Steps != 40 {
		t.Fatalf("%d optimizer steps, want 30 + 10", res.Steps)
	}
	if res.Unscaled == nil {
		t.Fatal("a scaled run has no unscaled reference")
	}
	log, _ := os.ReadFile(filepath.Join(r.Dir, measure.LogFile))
	if !strings.Contains(string(log), "finetune") {
		t.Fatalf("the log has no finetune rows:\n%s", log)
	}
}

// TestDefaultConfigLearns trains the shipped rope config briefly on the default corpus: the
// validation loss must already be well below the unigram entropy, the loss of a model that
// ignores context.
func TestDefaultConfigLearns(t *testing.T) {
	c, err := config.Load(filepath.Join("..", "..", "configs", "rope.yaml"), []string{"train.steps=300", "eval.lengths=[64]", "eval.tokens=8192"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := (&Run{Resolved: testrun.Resolved(t, c), Dir: filepath.Join(t.TempDir(), "rope")}).Execute(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	loss := *res.Lengths[0].Loss
	t.Logf("validation loss %.3f after 300 steps, unigram entropy %.3f", loss, res.UnigramEntropy)
	if loss > 0.8*res.UnigramEntropy {
		t.Fatalf("validation loss %.3f is not well below the unigram entropy %.3f", loss, res.UnigramEntropy)
	}
}

// TestCheckpointRecordsScheme: a checkpoint records the scheme its config built, defaults filled
// in, and one whose recorded scheme differs from what its config builds now (a default changed
// since, as T5's scale did) is refused.
func TestCheckpointRecordsScheme(t *testing.T) {
	c := testrun.Config(t, "t5")
	c.Train.Steps = 6
	r := &Run{Resolved: testrun.Resolved(t, c), Dir: t.TempDir()}
	if _, err := r.Execute(context.Background()); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(r.Dir, measure.CheckpointFile)
	var meta Meta
	ts, err := checkpoint.Read(path, &meta)
	if err != nil {
		t.Fatal(err)
	}
	// Independently: T5 at head width 8 has scale √8 and, trained at 16 tokens with 32 buckets,
	// max_distance 17.
	var rec struct {
		Scale       float64
		MaxDistance int
	}
	if err := json.Unmarshal(meta.Scheme, &rec); err != nil || rec.Scale != math.Sqrt(8) || rec.MaxDistance != 17 {
		t.Fatalf("recorded scheme %s (%v)", meta.Scheme, err)
	}
	// A record without a field added since (here LRScale) is read with the field's value now.
	recorded := meta.Scheme
	meta.Scheme = json.RawMessage(strings.Replace(string(recorded), `,"LRScale":1`, "", 1))
	if string(meta.Scheme) == string(recorded) {
		t.Fatalf("recorded scheme %s has no LRScale to drop", recorded)
	}
	if err := checkpoint.Write(path, meta, ts); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadCheckpoint(path); err != nil {
		t.Fatalf("a record without a field added since: %v", err)
	}
	meta.Scheme = json.RawMessage(strings.Replace(string(recorded), `"Scale":`, `"Scale":1,"Was":`, 1))
	if err := checkpoint.Write(path, meta, ts); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadCheckpoint(path); err == nil || !strings.Contains(err.Error(), "a default changed") {
		t.Fatalf("a checkpoint of another T5: %v", err)
	}
	// A checkpoint without the record (written before it was kept) still loads.
	meta.Scheme = nil
	if err := checkpoint.Write(path, meta, ts); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadCheckpoint(path); err != nil {
		t.Fatal(err)
	}
}
