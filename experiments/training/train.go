package training

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"time"

	"gorgonia.org/tensor"

	"extrapolate/data"
	"extrapolate/experiments/config"
	"extrapolate/experiments/measure"
	"extrapolate/internal/inputerr"
	"extrapolate/internal/progress"
	"extrapolate/internal/rng"
	"extrapolate/model"
	"extrapolate/task"
)

// Phases of training, in order: the main phase, DroPE's steps without positions
// (train.drope), fine-tuning (train.finetune), and done.
const (
	phaseTrain       = "train"
	phaseRecalibrate = "recalibrate"
	phaseFinetune    = "finetune"
	phaseDone        = "done"
)

// LogRow is one row of the training log.
type LogRow struct {
	Step         int     `json:"step"`
	Phase        string  `json:"phase"`
	Loss         float64 `json:"loss"`
	LR           float64 `json:"lr"`
	GradNorm     float64 `json:"grad_norm"`
	TokensPerSec float64 `json:"tokens_per_s"`
	Seconds      float64 `json:"seconds"`
}

// trainState is what a resumed run needs besides the weights and the optimizer's moments.
type trainState struct {
	Phase   string  `json:"phase"`
	Step    int     `json:"step"` // steps done in Phase
	OptStep int     `json:"opt_step"`
	Sampler uint64  `json:"sampler"`
	Seconds float64 `json:"seconds"`
	// Log holds the training log so far, so that a resumed run's log is whole.
	Log []LogRow `json:"log"`
	// PositionIDs is the state of the generator of the position ids (train.positions), absent
	// without them, so that a checkpoint of a run without reads as before.
	PositionIDs *uint64 `json:"position_ids,omitempty"`
}

type trainer struct {
	run   *Run
	model *model.Model
	opt   *model.AdamW
	// sampler draws the training windows, from the corpus or from the tasks.
	sampler sampler
	// positionRng draws the position ids of the main phase's batches (train.positions), from a
	// generator of its own, so that the windows drawn are the same with ids and without.
	positionRng rng.SplitMix64
	st          trainState
	// resumed is set when the state came from this run's own checkpoint; shared when it came
	// from another run with the same training.
	resumed, shared bool
}

// trainer builds the model and optimizer, fresh or from the run folder's checkpoint.
func (r *Run) trainer() (*trainer, error) {
	c := r.config()
	m, err := newModel(r.Resolved)
	if err != nil {
		return nil, err
	}
	t := &trainer{
		run: r, model: m,
		opt: model.NewAdamW(m, schedule(c), c.Train.WeightDecay, c.Train.GradClip),
		st:  trainState{Phase: phaseTrain},
	}
	t.opt.Beta1, t.opt.Beta2 = c.Train.Beta1, c.Train.Beta2
	t.positionRng.State = c.Seed + 2 // the model's weights draw from Seed, the sampler from Seed+1
	if tasks, _ := r.Resolved.Tasks(); len(tasks) > 0 {
		t.sampler = task.NewSampler(tasks, c.Seed+1)
	} else {
		s := data.NewSampler(r.corpus.Train, c.Seed+1)
		if c.Train.Passkey != nil {
			s.Passkey = c.Train.Passkey.Fraction
		}
		t.sampler = s
	}
	path := filepath.Join(r.Dir, measure.CheckpointFile)
	if r.SharedTraining != "" {
		if err := t.share(r.SharedTraining); err != nil {
			return nil, err
		}
		if r.Progress != nil {
			fmt.Fprintf(r.Progress, "%s trains the same weights as %s: using them\n", c.Name, r.SharedTraining)
		}
		t.shared = true
		return t, nil
	}
	if r.Overwrite {
		return t, nil
	}
	if _, err := os.Stat(path); err != nil {
		return t, nil
	}
	if err := t.restore(path); err != nil {
		// The checkpoint in the folder is bad input, as it is to cmd/eval.
		return nil, inputerr.Wrap(err)
	}
	t.resumed = true
	if r.Progress != nil && t.st.Phase != phaseDone {
		fmt.Fprintf(r.Progress, "resuming %s from its checkpoint: %s step %d\n", c.Name, t.st.Phase, t.st.Step)
	}
	return t, nil
}

// sampler fills a batch's inputs and targets with windows of n tokens: data.Sampler from the
// corpus, task.Sampler from tasks, whose targets are the answers' bytes only. A checkpoint
// saves its generator's state.
type sampler interface {
	Fill(ids, targets []int, n int) error
	Generator() *rng.SplitMix64
}

func schedule(c config.Config) model.Schedule {
	return model.Schedule{LR: c.Train.LR, MinLR: *c.Train.MinLR, Warmup: *c.Train.Warmup, Steps: c.Train.Steps}
}

// train runs the phases left to run, saving checkpoints on the way and at the end.
func (t *trainer) train(ctx context.Context) error {
	phases := t.run.phases()
	total := 0
	for _, ph := range phases {
		total += ph.steps
	}
	p := progress.New(t.run.Progress, total, "train")
	defer p.Finish()
	if phaseIndex(phases, t.st.Phase) < 0 {
		return fmt.Errorf("the training state is in phase %s, which this config does not have", t.st.Phase)
	}
	for i, ph := range phases {
		if phaseIndex(phases, t.st.Phase) > i {
			p.Skip(ph.steps)
			continue
		}
		p.Skip(t.st.Step)
		if ph.schedule != nil {
			t.opt.Schedule = *ph.schedule
		}
		if t.st.Step == 0 && ph.announce != "" && t.run.Progress != nil {
			fmt.Fprintln(t.run.Progress, ph.announce)
		}
		if err := t.phase(ctx, p, ph); err != nil {
			return err
		}
		if i+1 < len(phases) {
			t.st.Phase, t.st.Step = phases[i+1].name, 0
			// Keep the phase just done, whatever happens in the next.
			if err := t.save(); err != nil {
				return err
			}
		}
	}
	if t.st.Phase != phaseDone {
		t.st.Phase, t.st.Step = phaseDone, 0
		if err := t.save(); err != nil {
			return err
		}
	}
	return nil
}

// phase trains for the steps of the current phase not yet done.
func (t *trainer) phase(ctx context.Context, p *progress.Bar, ph trainPhase) error {
	c := t.run.config()
	batch, n, steps := ph.batch, ph.n, ph.steps
	o := model.Options{Train: true}
	if ph.positions != nil {
		o.PositionRange = ph.positions.Range
	}
	g, err := t.model.Graph(ph.scheme, batch, n, o)
	if err != nil {
		return err
	}
	defer g.Close()
	grads := make([]*tensor.Dense, len(t.model.Params))
	mark, marked := time.Now(), 0
	for t.st.Step < steps {
		if ctx.Err() != nil {
			if err := t.save(); err != nil {
				// Not ErrInterrupted: nothing of this run since its last checkpoint can be
				// resumed, and saying so would send the user to resume from nothing.
				return fmt.Errorf("interrupted at %s step %d, but saving the checkpoint failed: %w; the folder keeps its last checkpoint, if it had one", t.st.Phase, t.st.Step, err)
			}
			return fmt.Errorf("%w at %s step %d; checkpoint saved", measure.ErrInterrupted, t.st.Phase, t.st.Step)
		}
		start := time.Now()
		if err := t.sampler.Fill(g.IDs, g.Targets, n); err != nil {
			return err
		}
		if ph.positions != nil {
			ph.positions.Draw(&t.positionRng, g.Positions)
		}
		loss, err := g.Run()
		if err != nil {
			return err
		}
		step := t.opt.Step + 1
		if math.IsNaN(loss) || math.IsInf(loss, 0) {
			return fmt.Errorf("%w: loss is %v at step %d (%s); the last good checkpoint is kept", ErrDiverged, loss, step, t.st.Phase)
		}
		for i := range grads {
			grads[i] = g.Grad(i)
		}
		stats, err := t.opt.Update(t.model.Params, grads)
		if errors.Is(err, model.ErrNotFinite) {
			return fmt.Errorf("%w: gradient norm is %v at step %d (%s); the last good checkpoint is kept", ErrDiverged, stats.GradNorm, step, t.st.Phase)
		}
		if err != nil {
			return err
		}
		t.st.Step++
		t.st.Seconds += time.Since(start).Seconds()
		marked++
		if t.st.Step%c.Train.LogEvery == 0 || t.st.Step == steps {
			el := time.Since(mark).Seconds()
			t.st.Log = append(t.st.Log, LogRow{
				Step: t.opt.Step, Phase: t.st.Phase, Loss: loss, LR: stats.LR, GradNorm: stats.GradNorm,
				TokensPerSec: float64(marked*batch*n) / el, Seconds: t.st.Seconds,
			})
			mark, marked = time.Now(), 0
		}
		tps := 0.0
		if k := len(t.st.Log); k > 0 {
			tps = t.st.Log[k-1].TokensPerSec
		}
		p.Add(1, fmt.Sprintf("loss %.3f %.0f tok/s", loss, tps))
		if t.run.afterStep != nil {
			t.run.afterStep(t.st.Phase, t.st.Step)
		}
		if c.Train.CheckpointEvery > 0 && t.st.Step%c.Train.CheckpointEvery == 0 && t.st.Step < steps {
			if err := t.save(); err != nil {
				return err
			}
		}
	}
	return nil
}
