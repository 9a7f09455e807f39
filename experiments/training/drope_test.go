package training

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"extrapolate/experiments/config"
	"extrapolate/experiments/internal/testrun"
	"extrapolate/experiments/measure"
	"extrapolate/model"
	"extrapolate/position"
)

// dropeConfig is a tiny RoPE run that drops its positions for the last quarter of its 30
// steps: round(0.25·30) = round(7.5) = 8 steps without, after step 22.
func dropeConfig(t *testing.T) config.Config {
	t.Helper()
	c := testrun.Config(t, "rope")
	c.Name = "tiny-rope-drope"
	c.Train.LogEvery = 1
	c.Train.DroPE = &config.DroPE{Fraction: 0.25}
	if err := c.Complete(); err != nil {
		t.Fatal(err)
	}
	return c
}

// logRows returns a run's training log, each row split into its fields.
func logRows(t *testing.T, dir string) [][]string {
	t.Helper()
	var rows [][]string
	for _, r := range logOf(t, dir)[1:] {
		rows = append(rows, strings.Split(r, ","))
	}
	return rows
}

// TestDroPESwitchesAtItsStep trains a DroPE run and the same run without DroPE: up to step 22
// their logs are the same row for row, and from step 23 the DroPE run is in its phase without
// positions, its loss no longer RoPE's, with the learning rate of the same schedule. The
// results say what each phase was.
func TestDroPESwitchesAtItsStep(t *testing.T) {
	c := dropeConfig(t)
	const switchAt = 22
	if c.Train.MainSteps() != switchAt {
		t.Fatalf("main phase of %d steps, want %d", c.Train.MainSteps(), switchAt)
	}
	drope := &Run{Resolved: testrun.Resolved(t, c), Dir: filepath.Join(t.TempDir(), "drope")}
	res, err := drope.Execute(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	plain := c
	plain.Train.DroPE = nil
	rope := &Run{Resolved: testrun.Resolved(t, plain), Dir: filepath.Join(t.TempDir(), "rope")}
	if _, err := rope.Execute(context.Background()); err != nil {
		t.Fatal(err)
	}
	got, want := logRows(t, drope.Dir), logRows(t, rope.Dir)
	if len(got) != c.Train.Steps || len(want) != c.Train.Steps {
		t.Fatalf("logs of %d and %d rows, want one a step, %d", len(got), len(want), c.Train.Steps)
	}
	for i, row := range got {
		step, phase, loss, lr := row[0], row[1], row[2], row[3]
		if step != fmt.Sprint(i+1) {
			t.Fatalf("row %d is step %s", i, step)
		}
		if lr != want[i][3] {
			t.Errorf("step %s: learning rate %s, the same schedule without DroPE gives %s", step, lr, want[i][3])
		}
		if i < switchAt {
			if phase != phaseTrain || loss != want[i][2] {
				t.Errorf("step %s: %s, loss %s; want train, loss %s as without DroPE", step, phase, loss, want[i][2])
			}
			continue
		}
		if phase != phaseRecalibrate {
			t.Errorf("step %s: phase %s, want %s", step, phase, phaseRecalibrate)
		}
		if i == switchAt && loss == want[i][2] {
			t.Errorf("step %s, the first without positions: loss %s, RoPE's", step, loss)
		}
	}
	wantPhases := []measure.Phase{{Name: phaseTrain, Scheme: "rope", FirstStep: 1, LastStep: 22}, {Name: phaseRecalibrate, Scheme: "nope", FirstStep: 23, LastStep: 30}}
	if fmt.Sprint(res.Phases) != fmt.Sprint(wantPhases) || res.EvaluatedWith != "nope" || res.Steps != 30 {
		t.Errorf("results: phases %v evaluated with %q, %d steps; want %v with nope, 30", res.Phases, res.EvaluatedWith, res.Steps, wantPhases)
	}
	if s := measure.Summary(res); !strings.Contains(s, "phases: train steps 1-22 with rope, recalibrate steps 23-30 with nope; evaluated with nope\n") {
		t.Errorf("summary does not say the phases:\n%s", s)
	}
}

// TestDroPEPhaseHasNoRotation builds the graphs of a DroPE run's two phases on the same weights
// and batch: the phase without positions computes exactly what a NoPE graph computes, loss and
// every gradient bit for bit, and the main phase does not.
func TestDroPEPhaseHasNoRotation(t *testing.T) {
	c := dropeConfig(t)
	r := &Run{Resolved: testrun.Resolved(t, c)}
	phases := r.phases()
	if len(phases) != 2 || phases[1].name != phaseRecalibrate {
		t.Fatalf("phases %+v, want train then %s", phases, phaseRecalibrate)
	}
	m, err := newModel(r.Resolved)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	ids := make([]int, c.Train.BatchSize*c.Train.SeqLen)
	targets := make([]int, len(ids))
	for i := range ids {
		ids[i], targets[i] = rng.IntN(256), rng.IntN(256)
	}
	run := func(s position.Scheme) (float64, [][]float32) {
		g, err := m.Graph(s, c.Train.BatchSize, c.Train.SeqLen, model.Options{Train: true})
		if err != nil {
			t.Fatal(err)
		}
		defer g.Close()
		copy(g.IDs, ids)
		copy(g.Targets, targets)
		loss, err := g.Run()
		if err != nil {
			t.Fatal(err)
		}
		var grads [][]float32
		for i := range m.Params {
			grads = append(grads, append([]float32(nil), g.Grad(i).Data().([]float32)...))
		}
		return loss, grads
	}
	dropped, droppedGrads := run(phases[1].scheme)
	nope, nopeGrads := run(position.NoPE{})
	rope, _ := run(phases[0].scheme)
	if math.Float64bits(dropped) != math.Float64bits(nope) {
		t.Fatalf("loss without positions %v, a NoPE graph's %v", dropped, nope)
	}
	for i := range droppedGrads {
		for j, v := range droppedGrads[i] {
			if math.Float32bits(v) != math.Float32bits(nopeGrads[i][j]) {
				t.Fatalf("gradient of %s[%d]: %v without positions, %v in a NoPE graph", m.Params[i].Name, j, v, nopeGrads[i][j])
			}
		}
	}
	if rope == nope {
		t.Fatalf("the main phase's loss %v is NoPE's: it does not rotate", rope)
	}
}

// TestDroPEResumeAcrossTheSwitch interrupts a DroPE run in its main phase, at the switch and
// in its phase without positions, resumes each time, and requires the final weights to be
// those of an uninterrupted run bit for bit, and the log the same. A run cut short without
// positions resumes without positions.
func TestDroPEResumeAcrossTheSwitch(t *testing.T) {
	c := dropeConfig(t)
	c.Train.CheckpointEvery = 5
	main, dropped := c.Train.MainSteps(), c.Train.DroppedSteps()
	whole := &Run{Resolved: testrun.Resolved(t, c), Dir: filepath.Join(t.TempDir(), "whole")}
	if _, err := whole.Execute(context.Background()); err != nil {
		t.Fatal(err)
	}

	rng := rand.New(rand.NewPCG(uint64(os.Getpid()), 2))
	dir := filepath.Join(t.TempDir(), "interrupted")
	stops := []struct {
		phase string
		step  int
		// resumeAt is where the checkpoint left by the stop resumes.
		resumePhase string
		resumeStep  int
	}{
		{phaseTrain, 1 + rng.IntN(main-2), phaseTrain, 0},
		{phaseTrain, main, phaseRecalibrate, 0}, // the last step with positions
		{phaseRecalibrate, 1 + rng.IntN(dropped-2), phaseRecalibrate, 0},
	}
	stops[0].resumeStep, stops[2].resumeStep = stops[0].step, stops[2].step
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
		meta, _, err := readCheckpoint(filepath.Join(dir, measure.CheckpointFile))
		if err != nil {
			t.Fatal(err)
		}
		if meta.State.Phase != stop.resumePhase || meta.State.Step != stop.resumeStep {
			t.Fatalf("interrupted at %s step %d: the checkpoint resumes at %s step %d, want %s step %d",
				stop.phase, stop.step, meta.State.Phase, meta.State.Step, stop.resumePhase, stop.resumeStep)
		}
	}
	tr, err := LoadCheckpoint(filepath.Join(dir, measure.CheckpointFile))
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("recalibrate step %d of %d", stops[2].step, dropped); tr.Progress != want {
		t.Errorf("a checkpoint without positions says %q, want %q", tr.Progress, want)
	}
	if _, err := (&Run{Resolved: testrun.Resolved(t, c), Dir: dir}).Execute(context.Background()); err != nil {
		t.Fatal(err)
	}
	got, want := logOf(t, dir), logOf(t, whole.Dir)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("resumed log:\n%s\nuninterrupted:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	_, a, err := readCheckpoint(filepath.Join(dir, measure.CheckpointFile))
	if err != nil {
		t.Fatal(err)
	}
	_, b, err := readCheckpoint(filepath.Join(whole.Dir, measure.CheckpointFile))
	if err != nil {
		t.Fatal(err)
	}
	if len(a) != len(b) || len(a) == 0 {
		t.Fatalf("checkpoints of %d and %d tensors", len(a), len(b))
	}
	for name, x := range b {
		y, ok := a[name]
		if !ok {
			t.Fatalf("the resumed checkpoint has no %s", name)
		}
		xs, ys := x.Data().([]float32), y.Data().([]float32)
		for i := range xs {
			if math.Float32bits(xs[i]) != math.Float32bits(ys[i]) {
				t.Fatalf("%s[%d]: resumed %v, uninterrupted %v", name, i, ys[i], xs[i])
			}
		}
	}
}
