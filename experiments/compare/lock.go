package compare

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"extrapolate/experiments/measure"
	"extrapolate/internal/dirlock"
	"extrapolate/internal/inputerr"
	"extrapolate/internal/writable"
)

// A comparison's folder (the one holding REPORT.md and runs/) has one writer at any moment:
// the command that runs the comparison, a grid, a part (Plan.Only) or only its report holds the
// folder's lock (dirlock, the file .lock in it) for this process alone, from before it checks
// the folder until it has written its last file. Shards of one comparison (-shard i/n, n > 1)
// write the folder together by design, each its own runs: they hold the lock shared, under a key
// that names their plan (Plan.key), so that they admit each other and nothing else (a whole
// comparison, a grid, a part, a report, another comparison's shards); and a shard that finds
// every run done writes the report in its turn (dirlock.Lock.Turn), one shard at a time. Each
// run folder under runs/ has a lock of its own (training.Run), on another folder: a run and
// its comparison never conflict.

// Lock takes the comparison folder's lock, creating the folder if need be: for this process
// alone or, for a shard, shared with the other shards of the same plan. Another writer gets
// one line naming the folder and its holder's PID, an input error. Execute and WriteReport take
// it themselves when it is not held; a command takes it first, before any check of the folder,
// and holds it to its end (Unlock). Folders it created are removed by Unlock when left empty,
// so that a refused command leaves nothing behind.
func (r *Runner) Lock() error {
	if r.lock != nil {
		return nil
	}
	if err := writable.Check(r.Dir); err != nil {
		return inputerr.Wrap(err)
	}
	var (
		l   *dirlock.Lock
		err error
	)
	// A folder another process has just removed, as Unlock does when it created it and left it
	// empty, is made again.
	for try := 0; ; try++ {
		var made []string
		if made, err = mkdirs(r.Dir); err != nil {
			return fmt.Errorf("results folder: %w", err)
		}
		r.made = append(made, r.made...)
		if key := r.lockKey(); key != "" {
			l, err = dirlock.AcquireShared(r.Dir, key)
		} else {
			l, err = dirlock.Acquire(r.Dir)
		}
		if !errors.Is(err, syscall.ENOENT) || try == 2 {
			break
		}
	}
	if err != nil {
		r.removeMade()
		if errors.Is(err, dirlock.ErrBusy) {
			return inputerr.Wrap(fmt.Errorf("results folder %w", err))
		}
		return fmt.Errorf("results folder: %w", err)
	}
	r.lock = l
	if err := r.checkAround(); err != nil {
		r.Unlock()
		return err
	}
	return nil
}

// Unlock releases the lock Lock took, and removes the folders it created if they are empty.
func (r *Runner) Unlock() {
	r.lock.Release()
	r.lock = nil
	r.removeMade()
}

// CheckLock refuses, as Lock would, a comparison folder that another writer holds, without
// creating or changing anything: for -check.
func (r *Runner) CheckLock() error {
	if err := dirlock.Check(r.Dir, r.lockKey()); err != nil {
		return inputerr.Wrap(fmt.Errorf("results folder %w", err))
	}
	return r.checkAround()
}

// checkAround refuses a comparison folder inside a folder that another writer holds, as a grid's
// point folder is inside the grid's, and, for a grid, a point folder that another writer holds
// (a single comparison run into it): the grid writes its points' reports.
func (r *Runner) checkAround() error {
	if up, ok := parent(r.Dir); ok {
		if err := dirlock.Check(up, ""); err != nil {
			return inputerr.Wrap(fmt.Errorf("results folder %s: the folder it is in, %w", r.Dir, err))
		}
	}
	for _, p := range r.Plan.Comparison.Grid {
		if err := dirlock.Check(filepath.Join(r.Dir, p.Name), ""); err != nil {
			return inputerr.Wrap(fmt.Errorf("results folder %w", err))
		}
	}
	return nil
}

// parent is the folder dir is in, named as dir is when dir names it (a/b in a), else absolute;
// false for the root.
func parent(dir string) (string, bool) {
	clean := filepath.Clean(dir)
	if up := filepath.Dir(clean); up != "." && up != clean && filepath.Base(clean) != ".." {
		return up, true
	}
	abs, err := filepath.Abs(clean)
	if err != nil {
		return "", false
	}
	up := filepath.Dir(abs)
	return up, up != abs
}

// lockKey is the key of a shard's shared lock, "" for the lock of one process: a comparison run
// whole, its report, or the only shard (0/1).
func (r *Runner) lockKey() string {
	if r.Shard.N <= 1 {
		return ""
	}
	return r.Plan.key()
}

// key names the plan: its comparison, and every planned run's point, label, seed and config.
// Shards of one comparison with the same settings share it; any other plan, a part among them,
// has another.
func (p *Plan) key() string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\n", p.Comparison.Name)
	for _, r := range p.runs {
		fmt.Fprintf(h, "%s/%s/%d/%s\n", r.Point, r.Label, r.Seed, r.Config().Hash())
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// mkdirs makes dir and the folders above it that are missing, and returns the ones it made,
// deepest first.
func mkdirs(dir string) ([]string, error) {
	var missing []string
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err == nil {
			break
		}
		missing = append(missing, d)
		if filepath.Dir(d) == d {
			break
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	return missing, nil
}

// removeMade removes the folders Lock made, deepest first, while they are empty.
func (r *Runner) removeMade() {
	for _, d := range r.made {
		if os.Remove(d) != nil {
			break
		}
	}
	r.made = nil
}

// checkPart refuses to write a part of a comparison (Plan.Only) into a folder that holds results
// of runs the part leaves out: the whole comparison's folder, another comparison's, or a larger
// part's, whose report (REPORT.md, ppl_by_run.*, the figures) the part's would replace while
// their runs stay beside it. A part's own folder, resumed or extended to more runs, is the
// part's to write; -overwrite does not change this.
func (r *Runner) checkPart() error {
	if !r.Plan.part {
		return nil
	}
	mine := map[string]bool{}
	var folders []string // the comparison folders the part writes: Dir, or each grid point's
	for _, p := range r.Plan.Runs(r.Dir) {
		mine[p.Dir] = true
		if f := filepath.Dir(filepath.Dir(p.Dir)); !slices.Contains(folders, f) {
			folders = append(folders, f)
		}
	}
	var others []string
	add := func(folder, run string) {
		dir := filepath.Join(folder, RunsDir, run)
		if name, _ := filepath.Rel(r.Dir, dir); !mine[dir] && !slices.Contains(others, name) {
			others = append(others, name)
		}
	}
	for _, f := range folders {
		entries, _ := os.ReadDir(filepath.Join(f, RunsDir))
		for _, e := range entries {
			// A run's folder holds its config.yaml from its start on.
			if _, err := os.Stat(filepath.Join(f, RunsDir, e.Name(), measure.ConfigFile)); err == nil && e.IsDir() {
				add(f, e.Name())
			}
		}
		// The report names its runs, whose folders may have gone.
		var rep struct {
			Runs []struct {
				Label string `json:"label"`
				Seed  uint64 `json:"seed"`
			} `json:"runs"`
		}
		if b, err := os.ReadFile(filepath.Join(f, ComparisonJSON)); err == nil && json.Unmarshal(b, &rep) == nil {
			for _, run := range rep.Runs {
				add(f, fmt.Sprintf("%s-s%d", run.Label, run.Seed))
			}
		}
	}
	if len(others) == 0 {
		return nil
	}
	names := strings.Join(others, ", ")
	if len(others) > 3 {
		names = fmt.Sprintf("%s and %d more", strings.Join(others[:3], ", "), len(others)-3)
	}
	return inputerr.Wrap(fmt.Errorf("-runs: results folder %s holds runs the part leaves out (%s): it is the whole comparison's, or another's, whose report the part's would replace; give -out a folder of the part's own", r.Dir, names))
}
