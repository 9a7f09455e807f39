// Command train trains a small language model with one position scheme at a short length,
// evaluates its perplexity at that length and longer ones, and writes the curve and the weights
// under results/<name>/. Given a comparison config (one with runs:), it trains every run for
// every seed and writes the comparison's tables, plot and REPORT.md under results/<comparison>/.
//
//	go run ./cmd/train -config rope              # configs/rope.yaml
//	go run ./cmd/train -config my.yaml -set train.steps=300 -set eval.lengths=[64,256]
//	go run ./cmd/train -config compare           # every scheme, 3 seeds
//	go run ./cmd/train -config compare -shard 0/4   # a quarter of its runs; -report merges
//	go run ./cmd/train -config tasks -runs '*_flipflop' -out results/flipflop   # one task's runs
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"extrapolate/experiments/compare"
	"extrapolate/experiments/config"
	"extrapolate/experiments/measure"
	"extrapolate/experiments/training"
	"extrapolate/internal/exit"
	_ "extrapolate/plugins" // schemes, tasks and measures from outside, in every command
)

type sets []string

func (s *sets) String() string     { return strings.Join(*s, " ") }
func (s *sets) Set(v string) error { *s = append(*s, v); return nil }

func main() {
	os.Exit(run())
}

// run trains as the flags ask and returns the exit status (internal/exit): 2 for bad input, 1
// for a failure during the run or a claim not reproduced, 130 when interrupted.
func run() int {
	c := exit.New("train", os.Stderr)
	var (
		configArg = flag.String("config", "", "config file, or a bare name looked up in configs/ (e.g. rope)")
		out       = flag.String("out", "", "results folder (default results/<name>)")
		overwrite = flag.Bool("overwrite", false, "replace a finished run of a different config, and start afresh instead of resuming")
		quiet     = flag.Bool("quiet", false, "no progress output")
		shard     = flag.String("shard", "", "comparisons: run only runs k with k mod n = i, given as i/n")
		only      = flag.String("runs", "", "comparisons: compare only the runs whose labels match one of these comma-separated patterns (e.g. '*_flipflop'), into -out, a folder of the part's own")
		report    = flag.Bool("report", false, "comparisons: train nothing, write the report from the runs' results")
		check     = flag.Bool("check", false, "check the config, flags and results folder as the command would, then stop: train and write nothing")
		overrides sets
	)
	flag.Var(&overrides, "set", "override a config field, key=value with a dotted key (repeatable), e.g. -set train.steps=300")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: train -config NAME [-set key=value]... [-out DIR] [-overwrite] [-check]\n\n")
		flag.PrintDefaults()
	}
	if err := c.Parse(flag.CommandLine, os.Args[1:]); err != nil {
		return c.Bad(err)
	}
	if *configArg == "" {
		return c.Bad(errors.New("-config: missing; give a config file, or a bare name looked up in configs/ (-h lists the flags)"))
	}
	if err := emptyFlags(); err != nil {
		return c.Bad(err)
	}
	if err := config.Unknown(*configArg); err != nil {
		return c.Bad(err)
	}
	path := config.Resolve(*configArg)
	isComparison, err := compare.IsConfig(path)
	if err != nil {
		return c.Bad(err)
	}
	if isComparison {
		return runComparison(c, path, overrides, comparisonFlags{out: *out, shard: *shard, runs: *only, report: *report, overwrite: *overwrite, quiet: *quiet, check: *check})
	}
	if *shard != "" || *only != "" || *report {
		return c.Bad(errors.New("-shard, -runs and -report apply to comparison configs only"))
	}
	resolved, err := config.LoadResolved(path, overrides)
	if err != nil {
		return c.Bad(err)
	}
	cfg := resolved.Config()
	dir := *out
	if dir == "" {
		dir = filepath.Join("results", cfg.Name)
		if note := renamedScheme(overrides, cfg.Name, cfg.Position.Scheme); note != "" {
			fmt.Fprintln(os.Stderr, note)
		}
	}
	r := &training.Run{Resolved: resolved, Dir: dir, Overwrite: *overwrite, Progress: os.Stderr}
	if *quiet {
		r.Progress = nil
	}
	if err := r.Prepare(); err != nil {
		return c.Bad(err)
	}
	if *check {
		fmt.Printf("check: run %s into %s: ok\n", cfg.Name, dir)
		return 0
	}
	ctx, stop := c.Signals(stopTraining)
	defer stop()
	res, err := r.Execute(ctx)
	if err != nil {
		return failed(c, err)
	}
	fmt.Print(measure.Summary(res))
	fmt.Printf("results in %s\n", dir)
	return 0
}

// comparisonFlags are the flags of a comparison: -shard, -runs and -report are its alone.
type comparisonFlags struct {
	out, shard, runs                string
	report, overwrite, quiet, check bool
}

// stopTraining is what a first signal does to a training run, a comparison's included.
const stopTraining = "stopping after this step to save a checkpoint"

// runComparison runs a comparison config. It exits 1 when a claim the comparison checks is not
// reproduced, so that CI fails.
func runComparison(c *exit.Command, path string, overrides []string, f comparisonFlags) int {
	plan, err := compare.LoadPlan(path, overrides)
	if err == nil && f.runs != "" {
		plan, err = part(plan, f.runs, f.out)
	}
	if err != nil {
		return c.Bad(err)
	}
	r := &compare.Runner{Plan: plan, Dir: f.out, Overwrite: f.overwrite, Progress: os.Stderr, Command: commandLine()}
	if r.Dir == "" {
		r.Dir = filepath.Join("results", plan.Comparison.Name)
	}
	if f.quiet {
		r.Progress = nil
	}
	if f.shard != "" {
		if r.Shard, err = compare.ParseShard(f.shard); err == nil {
			err = plan.CheckShard(r.Shard)
		}
		if err != nil {
			return c.Bad(err)
		}
	}
	if f.check {
		if err := checkComparison(r, f.report); err != nil {
			return c.Bad(err)
		}
		return 0
	}
	// One writer in the comparison's folder, from before the first check of it to the last file
	// written; the shards of one comparison share it.
	if err := r.Lock(); err != nil {
		return failed(c, err)
	}
	defer r.Unlock()
	var rep *compare.Report
	if f.report {
		// A report of some runs would compare nothing: every run must have results.
		if err := checkReport(r); err != nil {
			return c.Bad(err)
		}
		// The report is the output: written whole, or, after a signal, not started.
		_, stop := c.Signals("stopping: the report will not be written")
		defer stop()
		if err := c.Write(func() (err error) { rep, err = r.WriteReport(); return err }); err != nil {
			return c.Fail(err)
		}
	} else {
		ctx, stop := c.Signals(stopTraining)
		defer stop()
		if rep, err = r.Execute(ctx); err != nil {
			return failed(c, err)
		}
	}
	if rep == nil {
		return 0 // runs still missing: a shard finished
	}
	fmt.Print(rep.Summary())
	fmt.Printf("report in %s\n", filepath.Join(r.Dir, compare.ReportFile))
	if failed := rep.Failed(); len(failed) > 0 {
		for _, cl := range failed {
			fmt.Fprintf(os.Stderr, "train: claim %s %s\n", cl.ID, cl.Verdict)
		}
		return 1
	}
	return 0
}

// part is the plan of the runs -runs names. It wants -out: in the comparison's own folder, the
// part's report would replace the whole comparison's. An -out that holds runs the part leaves
// out, the whole's folder given by name among them, is refused by the runner, under the
// folder's lock.
func part(plan *compare.Plan, only, out string) (*compare.Plan, error) {
	if out == "" {
		return nil, fmt.Errorf("-runs: give -out too: in results/%s, the report of a part would replace the whole comparison's", plan.Comparison.Name)
	}
	return plan.Only(strings.Split(only, ","))
}

// checkComparison checks what running the comparison (or, with reportOnly, writing its report)
// would check before starting, without training or writing anything, and prints the number of
// runs and how many have results, for scripts that submit the comparison (slurm/submit.sh).
func checkComparison(r *compare.Runner, reportOnly bool) error {
	// The folder's writer first: the command would be refused at once.
	if err := r.CheckLock(); err != nil {
		return err
	}
	if reportOnly {
		if err := checkReport(r); err != nil {
			return err
		}
		// Every file the report reads, read and checked as writing it would.
		if err := r.CheckReport(); err != nil {
			return err
		}
	} else if err := r.Check(); err != nil {
		return err
	}
	plan := r.Plan.Runs(r.Dir)
	// Every run trains on the same data and is scored on the same tokens: the first run's
	// corpus and lengths stand for all.
	first := &training.Run{Resolved: plan[0].Resolved, Dir: plan[0].Dir, Overwrite: true}
	if err := first.Prepare(); err != nil {
		return err
	}
	missing, total, err := r.MissingRuns()
	if err != nil {
		return err
	}
	fmt.Printf("check: comparison %s: %d runs, %d with results in %s: ok\n", r.Plan.Comparison.Name, total, total-len(missing), r.Dir)
	return nil
}

// checkReport refuses -report while runs lack results: a report of some runs would compare
// nothing, and exiting 0 would hide that.
func checkReport(r *compare.Runner) error {
	missing, total, err := r.MissingRuns()
	if err != nil {
		return err
	}
	if len(missing) == 0 {
		return nil
	}
	names := strings.Join(missing, ", ")
	if len(missing) > 3 {
		names = fmt.Sprintf("%s and %d more", strings.Join(missing[:3], ", "), len(missing)-3)
	}
	return fmt.Errorf("-report: %s holds results for %d of the %d runs; missing %s", r.Dir, total-len(missing), total, names)
}

// failed reports an error that stopped a run and returns the exit status (exit.Command.Fail):
// 130 for an interruption, with the command that resumes, 2 for bad input found on the way (a
// folder in use, a bad checkpoint to resume from) and 1 otherwise.
func failed(c *exit.Command, err error) int {
	code := c.Fail(err)
	if code == exit.Interrupted {
		fmt.Fprintf(os.Stderr, "resume with: %s\n", resumeCommand())
	}
	return code
}

// commandLine is how this command was invoked, for the report.
func commandLine() string {
	args := []string{"go", "run", "./cmd/train"}
	for _, a := range os.Args[1:] {
		args = append(args, shellQuote(a))
	}
	return strings.Join(args, " ")
}

// emptyFlags refuses a string flag given with an empty value, as an unset shell variable gives
// it: an empty -runs would otherwise compare every run, an empty -out write into results/<name>.
func emptyFlags() error {
	var err error
	flag.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "out", "shard", "runs":
			if err == nil && f.Value.String() == "" {
				err = fmt.Errorf("-%s: empty; give a value or leave the flag out", f.Name)
			}
		}
	})
	return err
}

// renamedScheme is a note for a -set that changes the config's scheme while its name, and so
// its results folder, stay the config's: -config alibi -set position.scheme=rope trains RoPE
// into results/alibi under the name alibi. Empty when the name is set too.
func renamedScheme(sets []string, name, scheme string) string {
	changed := false
	for _, s := range sets {
		key, _, _ := strings.Cut(s, "=")
		switch key {
		case "name":
			return ""
		case "position.scheme", "position":
			changed = true
		}
	}
	if !changed {
		return ""
	}
	return fmt.Sprintf("train: note: the run keeps the name %s, and writes results/%s, with the scheme %s; -set name=... or -out keeps it apart", name, name, scheme)
}
