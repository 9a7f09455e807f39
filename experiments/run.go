// Package experiments is the train-short, test-long protocol as code: a run trains a model with
// one position scheme at a short length and scores the same validation tokens at longer ones; a
// comparison does that for several schemes and seeds and checks published claims.
package experiments

import (
	"bytes"
	"context"
	"errors"
	"extrapolate/experiments/measure"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"gorgonia.org/tensor"

	"extrapolate/data"
	"extrapolate/internal/atomicfile"
	"extrapolate/internal/dirlock"
	"extrapolate/model"
)

// runFiles are the files a run writes in its folder, its own and every registered measure's
// (Measure.Files), whether or not its config asks for the measure: the only files a run
// replaces or removes, and, with their temporary files, all a folder check needs to look at.
// Anything else in the folder is the user's and stays untouched.
func runFiles() []string {
	files := slices.Clone(measure.RunOwnFiles)
	for _, m := range measure.All() {
		files = append(files, m.Files()...)
	}
	return files
}

func isRunFile(name string) bool { return slices.Contains(runFiles(), name) }

// runFilesIn lists the run's files that dir holds.
func runFilesIn(dir string) ([]string, error) {
	var found []string
	for _, f := range runFiles() {
		_, err := os.Lstat(filepath.Join(dir, f))
		if err == nil {
			found = append(found, f)
		} else if !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("results folder: %w", err)
		}
	}
	return found, nil
}

// ErrDiverged says the loss or a gradient stopped being finite.
var ErrDiverged = errors.New("training diverged")

// Run is one training run and its evaluation.
type Run struct {
	// Resolved is the run's config, resolved (Config.Resolve): the run builds nothing of it
	// again.
	Resolved *Resolved
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

// checkDir refuses, without Overwrite, to replace any file of a run (runFiles) unless the folder's
// config.yaml is this run's config, which a run writes before anything else: a finished or
// unfinished run of another config, a config.yaml written by hand, or a run's files without
// their config. It also checks that the folder can be written, without writing anything.
// locked says that this process holds the folder's lock already.
func (r *Run) checkDir(locked bool) error {
	st, err := os.Stat(r.Dir)
	if errors.Is(err, os.ErrNotExist) {
		return checkWritable(r.Dir)
	}
	if err != nil {
		return fmt.Errorf("results folder: %w", err)
	}
	if !st.IsDir() {
		return fmt.Errorf("results folder %s is a file", r.Dir)
	}
	if err := checkWritable(r.Dir); err != nil {
		return err
	}
	if r.Overwrite {
		return nil
	}
	found, err := runFilesIn(r.Dir)
	if err != nil || len(found) == 0 {
		return err
	}
	want := r.config().Marshal()
	old, err := os.ReadFile(filepath.Join(r.Dir, ConfigFile))
	if err == nil && bytes.Equal(old, want) {
		return nil // this config's run: it resumes or finishes
	}
	// A run under way in the folder is the reason to give, not its files: -overwrite would not
	// help. (Asked under this run's own lock, the lock would name this process.)
	if !locked {
		if err := dirlock.Busy(r.Dir); err != nil {
			return fmt.Errorf("results folder %w", err)
		}
	}
	switch {
	case errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("results folder %s holds %s but no %s, so they are not this run's; use -overwrite to replace them, or -out to write elsewhere", r.Dir, strings.Join(found, ", "), ConfigFile)
	case err != nil:
		return fmt.Errorf("results folder: %w", err)
	case slices.Contains(found, ResultsJSON):
		return fmt.Errorf("results folder %s holds a finished run of a different config (%s); use -overwrite to replace it, or -out to write elsewhere", r.Dir, describeDiff(old, want))
	case slices.Contains(found, CheckpointFile):
		return fmt.Errorf("results folder %s holds an unfinished run of a different config (%s); use -overwrite to start afresh, or -out to write elsewhere", r.Dir, describeDiff(old, want))
	default:
		return fmt.Errorf("results folder %s holds a %s of a different config (%s); use -overwrite to replace it, or -out to write elsewhere", r.Dir, ConfigFile, describeDiff(old, want))
	}
}

// Execute trains (or resumes), evaluates and writes the results. When ctx is cancelled it saves
// a checkpoint and returns an error wrapping ErrInterrupted.
func (r *Run) Execute(ctx context.Context) (*Result, error) {
	if err := r.Prepare(); err != nil {
		return nil, inputError(err)
	}
	if err := os.MkdirAll(r.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("results folder: %w", err)
	}
	// One run at a time in a folder: the lock comes before anything is written or removed.
	lock, err := dirlock.Acquire(r.Dir)
	if errors.Is(err, dirlock.ErrBusy) {
		return nil, inputError(fmt.Errorf("results folder %w", err))
	}
	if err != nil {
		return nil, fmt.Errorf("results folder: %w", err)
	}
	defer lock.Release()
	// The folder may have changed between Prepare and the lock, by a run that just finished.
	if err := r.checkDir(true); err != nil {
		return nil, inputError(err)
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
			if f == ConfigFile {
				continue
			}
			if err := os.Remove(filepath.Join(r.Dir, f)); err != nil && !errors.Is(err, os.ErrNotExist) {
				return nil, fmt.Errorf("results folder: %w", err)
			}
		}
		if err := measure.WriteFile(filepath.Join(r.Dir, ConfigFile), r.config().Marshal()); err != nil {
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
			res.Status, res.Error = "failed", err.Error()
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
	ev := &measure.Evaluation{Config: r.config(), Model: t.model, Scheme: evalScheme, TrainScheme: trainScheme, Corpus: r.corpus, Progress: r.Progress}
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
func (r *Run) config() Config { return r.Resolved.Config() }

func (r *Run) newResult(t *trainer) *Result {
	c := r.config()
	_, version := data.GoRoot()
	res := &Result{
		Name: c.Name, Scheme: c.Position.Scheme, Scaling: measure.ScalingName(c.Position), Seed: c.Seed,
		TrainLen: c.Train.SeqLen, Corpus: r.corpus.Source, GoVersion: version, CPU: cpuName(),
		UnigramEntropy: r.corpus.UnigramEntropy(), Params: t.model.NumParams(),
		Steps: t.st.OptStep, TrainSeconds: t.st.Seconds, Status: "ok", ConfigHash: c.Hash(), Protocol: c.Eval.Protocol(),
	}
	if n := len(t.st.Log); n > 0 {
		res.FinalTrainLoss = t.st.Log[n-1].Loss
	}
	return res
}

// newModel builds a fresh model of a resolved config with its main phase's scheme.
func newModel(r *Resolved) (*model.Model, error) {
	train, _ := r.Schemes()
	return model.New(r.ModelConfig(), train, tensor.Float32, r.Config().Seed)
}

// unwrapPath drops the operation and path an *os.PathError adds, for a message that names the
// path itself.
func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// CheckWritable checks that dir, or the nearest folder above it that exists, takes a new file,
// by creating one and removing it at once, so that a command can refuse an output folder before
// it spends time on work it could not save.
func CheckWritable(dir string) error { return checkWritable(dir) }

func checkWritable(dir string) error {
	d := dir
	for {
		st, err := os.Stat(d)
		if err == nil {
			if !st.IsDir() {
				return fmt.Errorf("results folder %s: %s is a file, not a folder", dir, d)
			}
			break
		}
		if !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("results folder %s: %w", dir, unwrapPath(err))
		}
		// A symbolic link to nothing does not exist for Stat, yet MkdirAll cannot create it.
		if target, err := os.Readlink(d); err == nil {
			return fmt.Errorf("results folder %s: %s is a symbolic link to %s, which does not exist", dir, d, target)
		}
		up := filepath.Dir(d)
		if up == d {
			break
		}
		d = up
	}
	f, err := os.CreateTemp(d, ".writable*")
	if err != nil {
		return fmt.Errorf("results folder %s: cannot write in %s: %w", dir, d, unwrapPath(err))
	}
	f.Close()
	os.Remove(f.Name())
	return nil
}

// removeStaleTemps removes the temporary files of a run's own files (runFiles) that a run which
// died left: a user's file named alike (.env.tmp) is not the run's to remove.
func removeStaleTemps(dir string) {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if target, ok := atomicfile.TempTarget(e.Name()); ok && isRunFile(target) && e.Type().IsRegular() {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}
