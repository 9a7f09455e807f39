package training

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"gorgonia.org/tensor"

	"extrapolate/data"
	"extrapolate/experiments/config"
	"extrapolate/experiments/measure"
	"extrapolate/internal/dirlock"
	"extrapolate/internal/inputerr"
	"extrapolate/model"
)

// ErrDiverged says the loss or a gradient stopped being finite.
var ErrDiverged = errors.New("training diverged")

// Run is one training run and its evaluation.
type Run struct {
	// Resolved is the run's config, resolved (Config.Resolve): the run builds nothing of it
	// again.
	Resolved *config.Resolved
	// Dir is the results folder.
	Dir string
	// Overwrite allows replacing a finished run of a different config, and starts afresh
	// instead of resuming.
	Overwrite bool
	// Progress receives progress bars and messages; nil is silent.
	Progress io.Writer
	// SharedTraining names the finished checkpoint of a run whose training is identical to
	// this one's (RoPE scalings apply when evaluating only): its weights are used as they are.
	SharedTraining string

	corpus *data.Corpus
	// afterStep, when set, is called after every training step: tests use it to interrupt a run
	// at a chosen step.
	afterStep func(phase string, step int)
}

// Prepare loads the corpus and checks everything that can fail before anything is written: the
// corpus and the lengths, and the results folder.
func (r *Run) Prepare() error {
	c := r.config()
	if r.corpus == nil {
		corpus, err := data.Load(c.Data)
		if err != nil {
			return err
		}
		r.corpus = corpus
	}
	longest := c.Train.SeqLen
	if f := c.Train.Finetune; f != nil {
		longest = f.SeqLen
	}
	if len(r.corpus.Train) < longest+2 {
		return fmt.Errorf("data: the training text has %d tokens, fewer than one window of %d", len(r.corpus.Train), longest+1)
	}
	if _, err := data.NewEvalSet(r.corpus.Valid, c.Eval.Tokens); err != nil {
		return err
	}
	return r.checkDir(false)
}

// Execute trains (or resumes), evaluates and writes the results. When ctx is cancelled it saves
// a checkpoint and returns an error wrapping measure.ErrInterrupted.
func (r *Run) Execute(ctx context.Context) (*measure.Result, error) {
	if err := r.Prepare(); err != nil {
		return nil, inputerr.Wrap(err)
	}
	if err := os.MkdirAll(r.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("results folder: %w", err)
	}
	// One run at a time in a folder: the lock comes before anything is written or removed.
	lock, err := dirlock.Acquire(r.Dir)
	if errors.Is(err, dirlock.ErrBusy) {
		return nil, inputerr.Wrap(fmt.Errorf("results folder %w", err))
	}
	if err != nil {
		return nil, fmt.Errorf("results folder: %w", err)
	}
	defer lock.Release()
	// The folder may have changed between Prepare and the lock, by a run that just finished.
	if err := r.checkDir(true); err != nil {
		return nil, inputerr.Wrap(err)
	}
	// Temporary files left by a run that died; no other run can be writing one now.
	removeStaleTemps(r.Dir)
	t, err := r.trainer()
	if err != nil {
		return nil, err
	}
	if !t.resumed {
		// A fresh start: results of an earlier config must not outlive it here. The config is
		// written before the checkpoint, so that a folder never holds a run's files without the
		// config they belong to.
		for _, f := range runFiles() {
			if f == measure.ConfigFile {
				continue
			}
			if err := os.Remove(filepath.Join(r.Dir, f)); err != nil && !errors.Is(err, os.ErrNotExist) {
				return nil, fmt.Errorf("results folder: %w", err)
			}
		}
		if err := measure.WriteFile(filepath.Join(r.Dir, measure.ConfigFile), r.config().Marshal()); err != nil {
			return nil, err
		}
		if t.shared {
			if err := t.save(); err != nil {
				return nil, err
			}
		}
	}
	if err := t.train(ctx); err != nil {
		if errors.Is(err, ErrDiverged) {
			res := r.newResult(t)
			res.Status, res.Error = measure.Failed, err.Error()
			if werr := r.writeResults(res, t, nil); werr != nil {
				return nil, fmt.Errorf("%w; writing the results: %v", err, werr)
			}
			return res, err
		}
		return nil, err
	}
	res := r.newResult(t)
	start := time.Now()
	trainScheme, evalScheme := r.Resolved.Schemes()
	ev := &measure.Evaluation{Resolved: r.Resolved, Model: t.model, Scheme: evalScheme, TrainScheme: trainScheme, Corpus: r.corpus,
		Progress: r.Progress}
	recs, err := ev.Measure(ctx)
	if err != nil {
		return nil, err
	}
	res.EvalSeconds = time.Since(start).Seconds()
	if err := r.writeResults(res, t, recs); err != nil {
		return nil, err
	}
	return res, nil
}

// config is the run's config.
func (r *Run) config() config.Config { return r.Resolved.Config() }

func (r *Run) newResult(t *trainer) *measure.Result {
	c := r.config()
	_, version := data.GoRoot()
	res := &measure.Result{
		Name: c.Name, Scheme: c.Position.Scheme, Scaling: measure.ScalingName(c.Position), Seed: c.Seed,
		TrainLen: c.Train.SeqLen, Corpus: r.corpus.Source, GoVersion: version, CPU: cpuName(),
		UnigramEntropy: r.corpus.UnigramEntropy(), Params: t.model.NumParams(),
		Steps: t.st.OptStep, TrainSeconds: t.st.Seconds, Status: measure.OK, ConfigHash: c.Hash(), Protocol: c.Eval.Protocol(),
	}
	if n := len(t.st.Log); n > 0 {
		res.FinalTrainLoss = t.st.Log[n-1].Loss
	}
	res.Phases, res.EvaluatedWith = r.phaseRecords()
	return res
}

// newModel builds a fresh model of a resolved config with its main phase's scheme.
func newModel(r *config.Resolved) (*model.Model, error) {
	train, _ := r.Schemes()
	return model.New(r.ModelConfig(), train, tensor.Float32, r.Config().Seed)
}
