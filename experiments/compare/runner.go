package compare

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"

	"extrapolate/experiments/measure"
	"extrapolate/experiments/training"
	"extrapolate/internal/dirlock"
	"extrapolate/internal/inputerr"
	"extrapolate/internal/writable"
)

// Runner runs a comparison, resolved once (LoadPlan), into Dir.
type Runner struct {
	Plan      *Plan
	Dir       string
	Shard     Shard
	Overwrite bool
	Progress  io.Writer
	// Command is the command line, recorded in the report.
	Command string

	lock *dirlock.Lock // the comparison folder's (Lock), while held
	made []string      // the folders Lock made, to remove if left empty
}

// Execute runs the shard's runs that are not done yet, then, when every run of the comparison
// has results, writes the report. It returns the report, or nil when runs are still missing.
func (r *Runner) Execute(ctx context.Context) (*Report, error) {
	if r.lock == nil {
		if err := r.Lock(); err != nil {
			return nil, err
		}
		defer r.Unlock()
	}
	plan := r.Plan.Runs(r.Dir)
	if err := r.Check(); err != nil {
		return nil, err
	}
	for _, p := range plan {
		if err := os.MkdirAll(filepath.Dir(p.Dir), 0o755); err != nil {
			return nil, fmt.Errorf("results folder: %w", err)
		}
	}
	for k, p := range plan {
		if !r.Shard.Selects(k) {
			continue
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%w before %s", measure.ErrInterrupted, p.ID())
		}
		if done(p) && !r.Overwrite {
			r.say("%s: done, skipped\n", p.ID())
			continue
		}
		r.say("run %d/%d: %s\n", k+1, len(plan), p.ID())
		// The same config's run resumes; another config's is replaced only with Overwrite, as a
		// single run's is (Check refused it above, and the run checks again under its lock).
		shared := p.Checkpoint // a model trained elsewhere, evaluated as it is
		if shared == "" {
			shared = sharedTraining(plan, k)
		}
		run := &training.Run{Resolved: p.Resolved, Dir: p.Dir, Overwrite: r.Overwrite, Progress: r.Progress,
			SharedTraining: shared}
		res, err := run.Execute(ctx)
		switch {
		case errors.Is(err, training.ErrDiverged):
			r.say("%s: failed: %v\n", p.ID(), err)
		case err != nil:
			return nil, fmt.Errorf("%s: %w", p.ID(), err)
		default:
			r.say("%s", measure.Summary(res))
		}
		// The run's model, graphs and optimizer are garbage now: return their memory before the
		// next run, so that a comparison's peak is one run's, not a growing multiple of it
		// (9.2 GB after 12 runs of compare_large's shape without this).
		debug.FreeOSMemory()
	}
	return r.WriteReport()
}

// Check refuses, before anything is written, a comparison whose shard would replace a run of
// another config, a config.yaml written by hand, or any file a run writes that is not its own
// (see training.Run.CheckDir), without Overwrite: a changed setting must not silently retrain and
// replace finished runs. It refuses a run folder another process is writing in, and a damaged
// results file of any run the comparison keeps (readResult), as the report would, and a part
// in a folder of runs it leaves out (checkPart). It writes nothing. Execute asks it under the
// folder's lock.
func (r *Runner) Check() error {
	plan := r.Plan.Runs(r.Dir)
	if err := writable.Check(r.Dir); err != nil {
		return inputerr.Wrap(err)
	}
	if err := r.checkKind(); err != nil {
		return inputerr.Wrap(err)
	}
	if err := r.checkPart(); err != nil {
		return err
	}
	for k, p := range plan {
		selected := r.Shard.Selects(k)
		if !selected || !r.Overwrite {
			// Kept, not trained again: its results must read.
			res, err := readResult(p)
			if err != nil {
				return err
			}
			if !selected || res != nil {
				continue
			}
		}
		run := &training.Run{Resolved: p.Resolved, Dir: p.Dir, Overwrite: r.Overwrite}
		if err := run.CheckDir(); err != nil {
			return inputerr.Wrap(err)
		}
	}
	return nil
}

// checkKind refuses, without Overwrite, a folder that holds the results of the other kind of
// comparison: a single comparison's (ppl_by_run.json at the top) for a grid, or a grid's
// (claims_by_point.json) for a single comparison. Their runs live in different subfolders, so
// no run's check would see the other; only the top-level report, which both write, would be
// replaced.
func (r *Runner) checkKind() error {
	if r.Overwrite {
		return nil
	}
	grid := len(r.Plan.Comparison.Grid) > 0
	other, kind := ComparisonJSON, "a single comparison"
	if !grid {
		other, kind = ScaleJSON, "a grid"
	}
	if _, err := os.Stat(filepath.Join(r.Dir, other)); err == nil {
		return fmt.Errorf("results folder %s holds %s's results (%s); use -overwrite to replace its report, or -out to write elsewhere", r.Dir, kind, other)
	}
	return nil
}

func (r *Runner) say(format string, args ...any) {
	if r.Progress != nil {
		fmt.Fprintf(r.Progress, format, args...)
	}
}

// done reports whether a planned run has results of its exact config.
func done(p Planned) bool {
	res, err := readResult(p)
	return err == nil && res != nil
}

// readResult reads a planned run's results: nil when it has none of its exact config (no
// results yet, or a folder of another config's run). A folder whose config.yaml is the run's
// holds only that run's files, so a results file there that does not read, is another config's,
// or has what the run cannot have written (measure.CheckResult) is damaged: an input error
// naming it, never a run to skip or train again.
func readResult(p Planned) (*measure.Result, error) {
	path := filepath.Join(p.Dir, measure.ResultsJSON)
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) || !sameConfigIn(p) {
		return nil, nil
	}
	if err != nil {
		return nil, inputerr.Wrap(err)
	}
	var res measure.Result
	if err := json.Unmarshal(b, &res); err != nil {
		return nil, inputerr.Wrap(fmt.Errorf("%s: does not read as a run's results: %v", path, err))
	}
	if res.ConfigHash != p.Config().Hash() {
		return nil, inputerr.Wrap(fmt.Errorf("%s: config_sha256: %q, not that of the run's config.yaml beside it (%s)", path, res.ConfigHash, p.Config().Hash()))
	}
	if err := measure.CheckResult(&res, p.Resolved); err != nil {
		return nil, inputerr.Wrap(fmt.Errorf("%s: %w", path, err))
	}
	return &res, nil
}

func sameConfigIn(p Planned) bool {
	b, err := os.ReadFile(filepath.Join(p.Dir, measure.ConfigFile))
	return err == nil && string(b) == string(p.Config().Marshal())
}

// sharedTraining finds an earlier planned run whose training is the same as the k-th's: RoPE
// scalings apply only when evaluating, so rope and rope with a scaling, without fine-tuning,
// train the same weights from the same seed. It returns that run's checkpoint, when finished.
func sharedTraining(plan []Planned, k int) string {
	key := training.Key(plan[k].Config())
	if key == "" {
		return ""
	}
	for _, p := range plan[:k] {
		if training.Key(p.Config()) != key {
			continue
		}
		path := filepath.Join(p.Dir, measure.CheckpointFile)
		if tr, err := training.LoadCheckpoint(path); err == nil && tr.Finished && training.Key(tr.Config()) == key {
			return path
		}
	}
	return ""
}

// MissingRuns lists the planned runs without results of their exact config, of total runs.
func (r *Runner) MissingRuns() (missing []string, total int, err error) {
	plan := r.Plan.Runs(r.Dir)
	for _, p := range plan {
		res, err := readResult(p)
		if err != nil {
			return nil, 0, err
		}
		if res == nil {
			missing = append(missing, p.ID())
		}
	}
	return missing, len(plan), nil
}

// WriteReport gathers the results of every run into the comparison's tables, plot and
// REPORT.md. With runs missing (shards still running) it writes nothing and returns nil. Every
// file it reads is read and checked before it writes any, so that a damaged run leaves the
// comparison's files as they were. It holds the folder's lock (Lock), and a shard its turn among
// the shards, while it reads and writes.
func (r *Runner) WriteReport() (*Report, error) {
	if r.lock == nil {
		if err := r.Lock(); err != nil {
			return nil, err
		}
		defer r.Unlock()
	}
	end, err := r.lock.Turn()
	if err != nil {
		return nil, err
	}
	defer end()
	if err := r.checkPart(); err != nil {
		return nil, err
	}
	rep, err := r.buildReport()
	if err != nil || rep == nil {
		return nil, err
	}
	if len(rep.Points) > 0 {
		return rep, rep.writeGrid(r.Dir)
	}
	return rep, rep.write(r.Dir)
}

// CheckReport reads and checks every file the report reads, as WriteReport does, and writes
// nothing: -check -report.
func (r *Runner) CheckReport() error {
	if err := r.checkPart(); err != nil {
		return err
	}
	_, err := r.buildReport()
	return err
}

// buildReport reads every run's results and the measures' files, checked, and makes the report
// with its sections, writing nothing: nil, with what is missing said, when runs lack results.
func (r *Runner) buildReport() (*Report, error) {
	if len(r.Plan.Comparison.Grid) > 0 {
		return r.buildGridReport()
	}
	plan := r.Plan.Runs(r.Dir)
	rep := newReport(r.Plan.Comparison, r.Command)
	rep.Part = r.Plan.part
	var missing []string
	for _, p := range plan {
		res, err := readResult(p)
		if err != nil {
			return nil, err
		}
		if res == nil {
			missing = append(missing, p.Config().Name)
			continue
		}
		rep.Runs = append(rep.Runs, measure.RunResult{Label: p.Label, Seed: p.Seed, Resolved: p.Resolved, Result: res, Dir: p.Dir})
	}
	if len(missing) > 0 {
		r.say("%d of %d runs have results; missing: %s. Run the report again when every shard has finished.\n",
			len(plan)-len(missing), len(plan), strings.Join(missing, ", "))
		return nil, nil
	}
	rep.aggregate()
	rep.judge()
	var err error
	if rep.sections, err = rep.measureSections(); err != nil {
		return nil, err
	}
	return rep, nil
}
