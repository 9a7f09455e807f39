package training

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"extrapolate/experiments/measure"
	"extrapolate/internal/atomicfile"
	"extrapolate/internal/dirlock"
	"extrapolate/internal/writable"
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

// CheckDir checks the run's folder as Prepare does, without loading the corpus: a comparison's
// runner asks it of every run of its shard before it starts any.
func (r *Run) CheckDir() error { return r.checkDir(false) }

// checkDir refuses, without Overwrite, to replace any file of a run (runFiles) unless the folder's
// config.yaml is this run's config, which a run writes before anything else: a finished or
// unfinished run of another config, a config.yaml written by hand, or a run's files without
// their config. It also checks that no other process holds the folder's lock and that the
// folder can be written, without writing anything. locked says that this process holds the
// folder's lock already.
func (r *Run) checkDir(locked bool) error {
	st, err := os.Stat(r.Dir)
	if errors.Is(err, os.ErrNotExist) {
		return writable.Check(r.Dir)
	}
	if err != nil {
		return fmt.Errorf("results folder: %w", err)
	}
	if !st.IsDir() {
		return fmt.Errorf("results folder %s is a file", r.Dir)
	}
	// A run under way in the folder is the reason to give, before its files: -overwrite would
	// not help, and the run would be refused once it asked for the lock, so a check must refuse
	// it too. (Asked under this run's own lock, the lock would name this process.)
	if !locked {
		if err := dirlock.Busy(r.Dir); err != nil {
			return fmt.Errorf("results folder %w", err)
		}
	}
	if err := writable.Check(r.Dir); err != nil {
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
	old, err := os.ReadFile(filepath.Join(r.Dir, measure.ConfigFile))
	if err == nil && bytes.Equal(old, want) {
		return nil // this config's run: it resumes or finishes
	}
	switch {
	case errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("results folder %s holds %s but no %s, so they are not this run's; use -overwrite to replace them, or -out to write elsewhere", r.Dir, strings.Join(found, ", "), measure.ConfigFile)
	case err != nil:
		return fmt.Errorf("results folder: %w", err)
	case slices.Contains(found, measure.ResultsJSON):
		return fmt.Errorf("results folder %s holds a finished run of a different config (%s); use -overwrite to replace it, or -out to write elsewhere", r.Dir, describeDiff(old, want))
	case slices.Contains(found, measure.CheckpointFile):
		return fmt.Errorf("results folder %s holds an unfinished run of a different config (%s); use -overwrite to start afresh, or -out to write elsewhere", r.Dir, describeDiff(old, want))
	default:
		return fmt.Errorf("results folder %s holds a %s of a different config (%s); use -overwrite to replace it, or -out to write elsewhere", r.Dir, measure.ConfigFile, describeDiff(old, want))
	}
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
