package experiments

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"testing"

	"extrapolate/experiments/plot"
)

// plannedReport is a report of a committed comparison's planned runs, each with an empty ok
// result, for what depends on the configs only.
func plannedReport(t *testing.T, name string) *Report {
	t.Helper()
	c, err := LoadPlan(filepath.Join("..", "configs", name+".yaml"), nil)
	if err != nil {
		t.Fatal(err)
	}
	rep := &Report{Comparison: c.Comparison}
	for _, p := range c.Runs(t.TempDir()) {
		rep.Runs = append(rep.Runs, RunResult{Label: p.Label, Seed: p.Seed, Config: p.Config, Resolved: p.Resolved, Result: &Result{Status: "ok"}})
	}
	rep.aggregate()
	return rep
}

// TestFamiliesOfCommittedComparisons checks the panel each committed series is drawn in, and
// that plain RoPE is the reference.
func TestFamiliesOfCommittedComparisons(t *testing.T) {
	every := map[string]plot.Family{
		"nope": plot.Absolute, "learned": plot.Absolute, "sinusoidal": plot.Absolute,
		"rope": plot.RoPE, "rope_pi": plot.RoPE, "rope_ntk": plot.RoPE, "rope_dynamic_ntk": plot.RoPE,
		"rope_yarn": plot.RoPE, "rope_llama3": plot.RoPE, "rope_partial": plot.RoPE, "xpos": plot.RoPE,
		"alibi": plot.Bias, "t5": plot.Bias, "kerple": plot.Bias, "fire": plot.Bias,
		"rope_nope_mix": plot.Temperature, "nope_logn": plot.Temperature, "rope_logn": plot.Temperature,
		"nope_ssmax": plot.Temperature, "nope_logn_train": plot.Temperature, "rope_logn_train": plot.Temperature,
		"rope_yarn_ft": plot.RoPE,
	}
	for _, name := range []string{"compare", "compare_large", "passkey"} {
		rep := plannedReport(t, name)
		got := map[string]plot.Family{}
		for f, idx := range rep.byFamily() {
			for _, i := range idx {
				got[rep.Series[i].Label] = plot.Family(f)
			}
		}
		for _, s := range rep.Series {
			want, ok := every[s.Label]
			if !ok {
				t.Errorf("%s: no family expected for %s", name, s.Label)
			} else if got[s.Label] != want {
				t.Errorf("%s: %s in %q, want %q", name, s.Label, got[s.Label].Title(), want.Title())
			}
		}
		if r := rep.reference(); r < 0 || rep.Series[r].Label != "rope" {
			t.Errorf("%s: reference %d, want rope", name, r)
		}
	}
	if n := len(plannedReport(t, "compare").Series); n != 21 {
		t.Errorf("compare has %d series, want 21", n)
	}
}

// TestSeriesStyles checks that every figure of a report gives a label the same style, the
// reference's to plain RoPE.
func TestSeriesStyles(t *testing.T) {
	rep := syntheticFigures(t, t.TempDir(), nil)
	if len(rep.Series) != 21 {
		t.Fatalf("%d series, want 21", len(rep.Series))
	}
	ref := rep.reference()
	for i, s := range rep.Series {
		want := plot.SeriesStyle(i)
		if i == ref {
			want = plot.ReferenceStyle
		}
		// The perplexity and loss figures take rep.styles(), the passkey one rep.styleOf.
		if got := rep.styles()[i]; !reflect.DeepEqual(got, want) || !reflect.DeepEqual(*rep.styleOf(s.Label), want) {
			t.Errorf("%s: style %+v, want %+v", s.Label, got, want)
		}
	}
}

// TestLogBins bins a synthetic loss by position by hand: exact positions 0 to 15, two tokens
// each at loss t, then two buckets over 16..31.
func TestLogBins(t *testing.T) {
	var ps []PositionBucket
	for p := range 16 {
		ps = append(ps, PositionBucket{From: p, To: p, Tokens: 2, Loss: float64(p)})
	}
	ps = append(ps, PositionBucket{From: 16, To: 23, Tokens: 8, Loss: 3}, PositionBucket{From: 24, To: 31, Tokens: 24, Loss: 7})
	want := []PositionBucket{
		{From: 0, To: 0, Tokens: 2, Loss: 0},
		{From: 1, To: 1, Tokens: 2, Loss: 1},
		{From: 2, To: 3, Tokens: 4, Loss: 2.5},
		{From: 4, To: 7, Tokens: 8, Loss: 5.5},
		{From: 8, To: 15, Tokens: 16, Loss: 11.5},
		{From: 16, To: 31, Tokens: 32, Loss: (3*8 + 7*24) / 32.0}, // 6
	}
	if got := logBins(ps); !reflect.DeepEqual(got, want) {
		t.Fatalf("bins\n%+v\nwant\n%+v", got, want)
	}
	// A second seed one nat higher everywhere: the bins' mean is half a nat higher, their
	// standard deviation √0.5.
	seed2 := make([]PositionBucket, len(ps))
	for k, p := range ps {
		p.Loss++
		seed2[k] = p
	}
	mean, std, err := binSeeds([][]PositionBucket{ps, seed2})
	if err != nil {
		t.Fatal(err)
	}
	for k, b := range mean {
		if b.Loss != want[k].Loss+0.5 || b.Tokens != 2*want[k].Tokens || math.Abs(std[k]-math.Sqrt(0.5)) > 1e-12 {
			t.Errorf("bin %d: %+v ± %g, want loss %g ± √0.5 over %d tokens", k, b, std[k], want[k].Loss+0.5, 2*want[k].Tokens)
		}
	}
}

// TestComparisonFigures draws the comparison figures of synthetic runs: 21 series in four
// panels, three families (an empty tile), and one. With EXTRAPOLATE_FIGURES set to a folder,
// they are kept there to be looked at.
func TestComparisonFigures(t *testing.T) {
	for _, tc := range []struct {
		name   string
		labels []string
	}{
		{"all", nil},
		{"three", []string{"nope", "rope", "rope_yarn", "alibi", "t5"}},
		{"one", []string{"alibi", "kerple"}},
	} {
		dir := t.TempDir()
		if keep := os.Getenv("EXTRAPOLATE_FIGURES"); keep != "" {
			dir = filepath.Join(keep, tc.name)
		}
		rep := syntheticFigures(t, dir, tc.labels)
		if err := rep.writePerplexityFigure(dir); err != nil {
			t.Fatal(err)
		}
		if err := rep.writePositionsFigure(dir, "non-overlapping windows"); err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{ComparisonPNG, ComparisonSVG, ComparisonPositionsPNG, ComparisonPositionsSVG} {
			if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
				t.Error(err)
			}
		}
	}
}

// syntheticFigures builds a report of compare's runs, and the two temperatures of training, with
// made-up perplexities and losses by position written under dir; labels, if given, keeps those.
func syntheticFigures(t *testing.T, dir string, labels []string) *Report {
	t.Helper()
	planned := plannedReport(t, "compare")
	runs := slices.Clone(planned.Runs)
	for _, name := range []string{"nope_logn_train", "rope_logn_train"} {
		rc, err := LoadResolved(filepath.Join("..", "configs", name+".yaml"), nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, seed := range planned.Comparison.Seeds {
			runs = append(runs, RunResult{Label: name, Seed: seed, Config: rc.Config(), Resolved: rc})
		}
	}
	rep := &Report{Comparison: planned.Comparison}
	rng := rand.New(rand.NewPCG(1, 2))
	series := map[string]int{}
	for _, r := range runs {
		if labels != nil && !slices.Contains(labels, r.Label) {
			continue
		}
		if _, ok := series[r.Label]; !ok {
			series[r.Label] = len(series)
		}
		r.Dir = filepath.Join(dir, RunsDir, r.Label+"-s"+strconv.FormatUint(r.Seed, 10))
		r.Result = syntheticRun(t, r.Dir, r.Label, series[r.Label], rng)
		rep.Runs = append(rep.Runs, r)
	}
	rep.aggregate()
	return rep
}

// syntheticRun makes up a run's perplexity at 64 to 1024 tokens, trained at 64, rising past
// 64 by the k-th of a few slopes, and its loss by position, and writes the latter to dir.
func syntheticRun(t *testing.T, dir, label string, k int, rng *rand.Rand) *Result {
	const trainLen = 64
	slope := 0.06 * float64(k%7)
	res := &Result{Status: "ok", TrainLen: trainLen}
	var pls []PositionLoss
	for _, n := range []int{64, 128, 256, 512, 1024} {
		if label == "learned" && n > trainLen {
			res.Lengths = append(res.Lengths, LengthResult{Length: n, Reason: "not applicable by design"})
			pls = append(pls, PositionLoss{Length: n, Reason: "not applicable by design"})
			continue
		}
		pl := PositionLoss{Length: n, Applicable: true, sum: make([]float64, n), count: make([]int, n)}
		var sum float64
		for p := range n {
			loss := 1.8 + 1.5/math.Sqrt(float64(p+1)) + 0.1*rng.NormFloat64()
			if p >= trainLen {
				loss += slope * math.Log2(float64(p+1)/trainLen)
			}
			pl.sum[p], pl.count[p] = 16*loss, 16
			sum += loss
		}
		pl.bucket(trainLen)
		pls = append(pls, pl)
		loss := sum / float64(n)
		ppl := math.Exp(loss)
		res.Lengths = append(res.Lengths, LengthResult{Length: n, Applicable: true, Loss: &loss, Perplexity: &ppl})
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := writeJSON(filepath.Join(dir, PositionsJSON), positionsFile{Name: label, TrainLen: trainLen, Lengths: pls}); err != nil {
		t.Fatal(err)
	}
	return res
}
