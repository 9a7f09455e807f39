package training

import (
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"go.yaml.in/yaml/v3"

	"extrapolate/checkpoint"
	"extrapolate/experiments/config"
	"extrapolate/experiments/internal/testrun"
	"extrapolate/experiments/measure"
)

// withPositions is c with train.positions read from src, one log row a step.
func withPositions(t *testing.T, c config.Config, src string) config.Config {
	t.Helper()
	c.Train.LogEvery = 1
	if src != "" {
		var ids config.Train
		if err := yaml.Unmarshal([]byte("positions: "+src), &ids); err != nil {
			t.Fatal(err)
		}
		c.Train.Positions = ids.Positions
	}
	if err := c.Complete(); err != nil {
		t.Fatal(err)
	}
	return c
}

// execute runs c to the end in a folder of its own.
func execute(t *testing.T, c config.Config, name string) *Run {
	t.Helper()
	r := &Run{Resolved: testrun.Resolved(t, c), Dir: filepath.Join(t.TempDir(), name)}
	if _, err := r.Execute(context.Background()); err != nil {
		t.Fatal(err)
	}
	return r
}

// weightsOf reads a finished run's weights from its checkpoint, by name.
func weightsOf(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	ts, err := checkpoint.Read(filepath.Join(dir, measure.CheckpointFile), &Meta{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, x := range ts {
		out[x.Name] = append([]byte(nil), x.Value.Raw...)
	}
	return out
}

// TestDefaultIDsTrainAsWithout trains each scheme kind (a rotation, a learned bias by distance,
// a learned table) with train.positions whose only draw is 0..n−1 (a range as long as the
// window), which takes the ids' code path in every op, and without the section: the training
// logs (loss, learning rate, gradient norm) are the same row for row, and the weights to the
// bit.
func TestDefaultIDsTrainAsWithout(t *testing.T) {
	for _, scheme := range []string{"rope", "t5", "learned"} {
		t.Run(scheme, func(t *testing.T) {
			base := testrun.Config(t, scheme)
			plain := execute(t, withPositions(t, base, ""), "plain")
			for _, src := range []string{"{type: randomized, noise_max_length: 16}", "{type: pose, scaled_max_position_embeddings: 16}"} {
				at := execute(t, withPositions(t, base, src), "at")
				a, b := logOf(t, plain.Dir), logOf(t, at.Dir)
				if len(a) != len(b) || len(a) != base.Train.Steps+1 {
					t.Fatalf("%s: logs of %d and %d rows", src, len(a), len(b))
				}
				for i := range a {
					if a[i] != b[i] {
						t.Fatalf("%s: row %d %s, without ids %s", src, i, b[i], a[i])
					}
				}
				wa, wb := weightsOf(t, plain.Dir), weightsOf(t, at.Dir)
				for name, x := range wa {
					if string(wb[name]) != string(x) {
						t.Fatalf("%s: weight %s differs from the run without ids", src, name)
					}
				}
			}
		})
	}
}

// TestResumeWithPositionIDs interrupts a PoSE run at a random step, resumes it, and requires the
// log of an uninterrupted run, and its weights to the bit: the checkpoint keeps the ids'
// generator. The run's log is not the one without ids: the ids act.
func TestResumeWithPositionIDs(t *testing.T) {
	c := testrun.Config(t, "rope")
	c.Train.CheckpointEvery = 7
	c = withPositions(t, c, "{type: pose, scaled_max_position_embeddings: 48}")
	whole := execute(t, c, "whole")
	want := logOf(t, whole.Dir)
	plain := c
	plain.Train.Positions = nil
	if without := logOf(t, execute(t, plain, "plain").Dir); without[1] == want[1] {
		t.Fatalf("step 1 with PoSE's ids %s, as without them", want[1])
	}

	stop := 1 + rand.New(rand.NewPCG(uint64(os.Getpid()), 2)).IntN(c.Train.Steps-2)
	t.Logf("interrupting at step %d", stop)
	dir := filepath.Join(t.TempDir(), "interrupted")
	ctx, cancel := context.WithCancel(context.Background())
	r := &Run{Resolved: testrun.Resolved(t, c), Dir: dir, afterStep: func(_ string, step int) {
		if step == stop {
			cancel()
		}
	}}
	_, err := r.Execute(ctx)
	cancel()
	if !errors.Is(err, measure.ErrInterrupted) {
		t.Fatalf("interrupting at step %d: %v", stop, err)
	}
	if _, err := (&Run{Resolved: testrun.Resolved(t, c), Dir: dir}).Execute(context.Background()); err != nil {
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
	wa, wb := weightsOf(t, whole.Dir), weightsOf(t, dir)
	for name, x := range wa {
		if string(wb[name]) != string(x) {
			t.Fatalf("weight %s of the resumed run differs from the uninterrupted run's", name)
		}
	}
}
