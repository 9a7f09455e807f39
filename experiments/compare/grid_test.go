package compare

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"extrapolate/experiments/config"
	"extrapolate/experiments/internal/testrun"
	"extrapolate/experiments/measure"
	"extrapolate/experiments/measure/positions"
	"extrapolate/experiments/training"
	"extrapolate/internal/inputerr"
)

// gridFiles writes a base run config and a comparison with a grid of two points, and returns
// the comparison's path.
func gridFiles(t *testing.T, dir, grid string) string {
	t.Helper()
	cfg := `name: base
data: {corpus: text, path: ` + testrun.Corpus(t) + `}
model: {d_model: 16, layers: 1, heads: 2}
position: {scheme: alibi}
train: {seq_len: 16, batch_size: 4, steps: 12}
eval: {lengths: [16, 32, 64, 256], tokens: 512, batch_tokens: 256}
`
	if err := os.WriteFile(filepath.Join(dir, "base.yaml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	comp := `comparison: scale
seeds: [1, 2]
runs:
  - {config: base, label: alibi}
  - {config: base, label: t5, set: {position.scheme: t5}}
claims: [alibi_flat]
` + grid
	path := filepath.Join(dir, "scale.yaml")
	if err := os.WriteFile(path, []byte(comp), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestGridRunEqualsRunAlone runs a comparison over a grid of two points in two shards, checks
// the report by point, and that a grid point's run equals, to the last bit, the same run made
// alone with the point's settings as -set overrides.
func TestGridRunEqualsRunAlone(t *testing.T) {
	dir := t.TempDir()
	path := gridFiles(t, dir, `grid:
  - {name: small}
  - {name: wide, set: {model.d_model: 32, model.heads: 4, train.steps: 24}}
`)
	c, err := LoadPlan(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	plan := c.Runs("out")
	if len(plan) != 8 || plan[4].Point != "wide" || plan[4].Dir != filepath.Join("out", "wide", RunsDir, "alibi-s1") || plan[4].Config().Model.DModel != 32 || plan[0].Config().Model.DModel != 16 {
		t.Fatalf("plan: %d runs, the fifth %+v", len(plan), plan[4])
	}
	out := filepath.Join(dir, "results")
	r := &Runner{Plan: c, Dir: out, Shard: Shard{I: 0, N: 2}, Command: "test"}
	if rep, err := r.Execute(context.Background()); err != nil || rep != nil {
		t.Fatalf("first shard: %v, report %v", err, rep)
	}
	r.Shard = Shard{I: 1, N: 2}
	rep, err := r.Execute(context.Background())
	if err != nil || rep == nil {
		t.Fatalf("second shard: %v, report %v", err, rep)
	}
	if len(rep.Points) != 2 || rep.Points[1].Params <= rep.Points[0].Params || rep.Points[1].TrainTokens != 24*4*16 {
		t.Fatalf("points: %+v %+v", rep.Points[0], rep.Points[1])
	}
	for _, f := range []string{ReportFile, ScaleCSV, ScaleJSON, scaleFigure("alibi_flat", "png"), scaleFigure("alibi_flat", "svg"),
		filepath.Join("small", ReportFile), filepath.Join("wide", ReportFile), filepath.Join("wide", ComparisonJSON)} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("missing %s: %v", f, err)
		}
	}
	md, _ := os.ReadFile(filepath.Join(out, ReportFile))
	for _, want := range []string{"| alibi_flat | ≤ 1.05 |", "model.d_model=32", "[wide](wide/REPORT.md)"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("REPORT.md lacks %q:\n%s", want, md)
		}
	}
	point, _ := os.ReadFile(filepath.Join(out, "wide", ReportFile))
	if !strings.Contains(string(point), "x-transformers' RelativePositionBias") {
		t.Errorf("the point's REPORT.md does not state how T5's table is trained:\n%s", point)
	}
	if s := rep.Summary(); !strings.Contains(s, "alibi_flat") || !strings.Contains(s, "wide") {
		t.Errorf("summary:\n%s", s)
	}
	checkDamagedPointRefused(t, r, out)

	// The wide point's t5 run, seed 2, made alone.
	alone, err := config.Load(filepath.Join(dir, "base.yaml"), []string{"model.d_model=32", "model.heads=4", "train.steps=24", "position.scheme=t5", "seed=2", "name=t5-s2"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := (&training.Run{Resolved: testrun.Resolved(t, alone), Dir: filepath.Join(dir, "alone")}).Execute(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var inGrid measure.Result
	b, err := os.ReadFile(filepath.Join(out, "wide", RunsDir, "t5-s2", measure.ResultsJSON))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &inGrid); err != nil {
		t.Fatal(err)
	}
	if inGrid.ConfigHash != res.ConfigHash || inGrid.FinalTrainLoss != res.FinalTrainLoss || len(inGrid.Lengths) != len(res.Lengths) {
		t.Fatalf("grid run %s loss %v, alone %s loss %v", inGrid.ConfigHash, inGrid.FinalTrainLoss, res.ConfigHash, res.FinalTrainLoss)
	}
	for i, l := range res.Lengths {
		if g := inGrid.Lengths[i]; *g.Loss != *l.Loss {
			t.Errorf("length %d: %v in the grid, %v alone", l.Length, *g.Loss, *l.Loss)
		}
	}
}

func TestGridRefused(t *testing.T) {
	for _, tc := range []struct{ grid, want string }{
		{"grid:\n  - {name: a}\n  - {name: a}\n", "grid[1].name"},
		{"grid:\n  - {name: ../x}\n", "grid[0].name"},
		{"grid:\n  - {name: runs}\n", "grid[0].name"},
		{"grid:\n  - {name: a, set: {seed: 3}}\n", "grid[0].set"},
		{"grid:\n  - {name: a}\n  - {name: b, set: {train.seq_len: 32}}\n", "grid[1] (b): train.seq_len"},
		{"grid:\n  - {name: a, set: {model.d_modl: 32}}\n", "grid[0] (a)"},
		// An error in a point's setting names it and its line in the comparison's file, never a -set.
		{"grid:\n  - {name: a}\n  - {name: b, set: {train.steps: 20.5}}\n", "train.steps: 20.5, want a whole number (from grid[1].set of "},
		{"grid:\n  - {name: a}\n  - {name: b, set: {train.steps: 20.5}}\n", "scale.yaml, line 9)"},
		{"grid:\n  - name: a\n    set:\n      model.d_modl: 32\n", "model.d_modl: unknown field (from grid[0].set of "},
		{"grid:\n  - name: a\n    set:\n      model.d_modl: 32\n", "scale.yaml, line 10)"},
	} {
		_, err := Load(gridFiles(t, t.TempDir(), tc.grid), nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "-set") {
			t.Errorf("%q: %v, want an error with %q", tc.grid, err, tc.want)
		}
	}
}

// TestGridAndComparisonShareNoFolder checks that a grid refuses a folder holding a single
// comparison's results, and a comparison a grid's, without Overwrite: their runs live in
// different subfolders, but both write the top-level report.
func TestGridAndComparisonShareNoFolder(t *testing.T) {
	for _, tc := range []struct {
		grid, holds, want string
	}{
		{"grid:\n  - {name: a}\n", ComparisonJSON, "holds a single comparison's results"},
		{"", ScaleJSON, "holds a grid's results"},
	} {
		dir := t.TempDir()
		out := filepath.Join(dir, "out")
		if err := os.MkdirAll(out, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(out, tc.holds), []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
		plan, err := LoadPlan(gridFiles(t, dir, tc.grid), nil)
		if err != nil {
			t.Fatal(err)
		}
		r := &Runner{Plan: plan, Dir: out}
		if err := r.Check(); err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "-overwrite") {
			t.Errorf("%s in the folder: %v, want an error with %q", tc.holds, err, tc.want)
		}
		r.Overwrite = true
		if err := r.Check(); err != nil {
			t.Errorf("%s in the folder, with Overwrite: %v", tc.holds, err)
		}
		if b, _ := os.ReadFile(filepath.Join(out, tc.holds)); string(b) != "{}" {
			t.Errorf("Check changed %s", tc.holds)
		}
	}
}

// checkDamagedPointRefused damages a run file of the grid's last point: the report must refuse
// it as the input's fault, naming the file, before it writes anything, the first point's
// report included.
func checkDamagedPointRefused(t *testing.T, r *Runner, out string) {
	t.Helper()
	path := filepath.Join(out, "wide", RunsDir, "t5-s2", positions.RunJSON)
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, good[:len(good)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	// An atomic rewrite makes a new file: its modification time tells.
	before := map[string]time.Time{}
	for _, f := range []string{filepath.Join("small", ReportFile), filepath.Join("small", ComparisonJSON), ReportFile, ScaleJSON} {
		st, err := os.Stat(filepath.Join(out, f))
		if err != nil {
			t.Fatal(err)
		}
		before[f] = st.ModTime()
	}
	if rep, err := r.WriteReport(); rep != nil || !inputerr.Is(err) || !strings.Contains(err.Error(), path) {
		t.Fatalf("a truncated %s: %v, want an input error naming it", path, err)
	}
	for f, mod := range before {
		if st, err := os.Stat(filepath.Join(out, f)); err != nil || !st.ModTime().Equal(mod) {
			t.Errorf("the refused report rewrote %s (%v)", f, err)
		}
	}
	if err := os.WriteFile(path, good, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestGridMarksFailedRuns runs a grid one of whose points diverges: the grid's verdict table
// must say which runs failed there and why, its claims be undecided rather than "not
// applicable", and its perplexities read failed, not n/a.
func TestGridMarksFailedRuns(t *testing.T) {
	dir := t.TempDir()
	path := gridFiles(t, dir, `grid:
  - {name: small}
  - {name: hot, set: {train.lr: 1.0e+30, train.min_lr: 1.0e+29, train.warmup: 0, train.grad_clip: 0}}
`)
	c, err := LoadPlan(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "results")
	rep, err := (&Runner{Plan: c, Dir: out, Command: "test"}).Execute(context.Background())
	if err != nil || rep == nil {
		t.Fatalf("the grid: %v, report %v", err, rep)
	}
	if got := rep.Points[1].Failed; len(got) != 4 || got[0].Run != "alibi-s1" || !strings.Contains(got[0].Error, "training diverged") {
		t.Fatalf("the hot point's failed runs: %+v, want its 4 runs, diverged", got)
	}
	md, _ := os.ReadFile(filepath.Join(out, ReportFile))
	for _, want := range []string{
		"| alibi_flat | ≤ 1.05 | ✓ ",
		" | undecided |\n",
		"| runs | | ✓ 4 of 4 ok | ✗ 4 of 4 failed (alibi-s1: training diverged: ",
		"| alibi | ", " | failed | failed |\n",
	} {
		if !strings.Contains(string(md), want) {
			t.Errorf("REPORT.md lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(string(md), "n/a") {
		t.Errorf("REPORT.md shows a failed run's numbers as n/a:\n%s", md)
	}
	js, _ := os.ReadFile(filepath.Join(out, ScaleJSON))
	if !strings.Contains(string(js), `"failed_runs": [`) {
		t.Errorf("%s lacks the failed runs", ScaleJSON)
	}
	if s := rep.Summary(); !strings.Contains(s, "hot: ✗ 4 of 4 failed") {
		t.Errorf("summary:\n%s", s)
	}
}
