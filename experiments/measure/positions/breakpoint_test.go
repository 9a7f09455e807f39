package positions

import (
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"extrapolate/experiments/config"
	"extrapolate/experiments/measure"
)

// curve buckets a loss by position given per position, 64 windows of n tokens each, as a run's
// pass records it, for a model trained at trainLen.
func curve(n, trainLen int, loss func(p int) float64) []Bucket {
	pl := Length{sum: make([]float64, n), count: make([]int, n)}
	for p := range n {
		pl.sum[p], pl.count[p] = 64*loss(p), 64
	}
	pl.bucket(trainLen)
	return pl.Positions
}

// TestBreakpoint checks the rule on synthetic curves with answers worked by hand, trained at 64
// and scored at 1024. Past 128 (twice the training length) a run's buckets start at
// round(128·2^(k/8)): 140, 152, 166, 181, 197, 215, …; each falls in one eighth-octave bin.
func TestBreakpoint(t *testing.T) {
	const L, n = 64, 1024
	noise := rand.New(rand.NewPCG(1, 2))
	jitter := make([]float64, n)
	for p := range jitter {
		jitter[p] = 0.01 * (2*noise.Float64() - 1) // ±1%: under the 5% margin
	}
	for _, c := range []struct {
		name  string
		loss  func(p int) float64
		want  int
		level float64
		ok    bool
	}{
		// Flat within ±1%, as ALiBi: never 5% above.
		{"flat", func(p int) float64 { return 2 * (1 + jitter[p]) }, 0, 2, false},
		// A step to 2.5 at 200: the bucket holding 200 is 197..214, whose mean (3 at 2.0, 15 at
		// 2.5) is 2.42 > 2.1, and the next is all 2.5: the break is placed at 197.
		{"step at 200", func(p int) float64 {
			if p >= 200 {
				return 2.5
			}
			return 2
		}, 197, 2, true},
		// A linear rise from 2 at 64 to 3 at 1024 crosses 2.1 at 160: the bucket 152..165 has
		// mean 2 + (158.5 − 64)/960 = 2.098, the bucket 166..180 2.114: the first above 2.1
		// starts at 166.
		{"ramp", func(p int) float64 { return 2 + math.Max(0, float64(p-64))/960 }, 166, 2, true},
		// One noisy bin above the margin, the next back under it: not a break.
		{"one bad bin", func(p int) float64 {
			if p >= 256 && p < 277 {
				return 3
			}
			return 2
		}, 0, 2, false},
		// Early positions (0..31, little context) do not count in the level.
		{"context warm-up", func(p int) float64 {
			if p < L/2 {
				return 5
			}
			if p >= 512 {
				return 2.2
			}
			return 2
		}, 512, 2, true},
	} {
		got, level, ok := Breakpoint(curve(n, L, c.loss), L)
		if got != c.want || ok != c.ok || math.Abs(level-c.level) > 0.01*c.level {
			t.Errorf("%s: breakpoint %d (%v), level %.4f; want %d (%v), level %.4g", c.name, got, ok, level, c.want, c.ok, c.level)
		}
	}
	if _, _, ok := Breakpoint(curve(L, L, func(int) float64 { return 2 }), L); ok {
		t.Error("a curve that stops at the training length has a breakpoint")
	}
}

// TestBreakpointTable checks the report's table: a RoPE run of the default config, whose curve
// steps up at 200, breaks at 197 (3.08x) beside the prediction 2π·10^1.5 ≈ 199 (3.11x); ALiBi,
// flat, does not break and has no prediction.
func TestBreakpointTable(t *testing.T) {
	var runs []measure.RunResult
	for _, name := range []string{"rope", "alibi"} {
		rc, err := config.LoadResolved(filepath.Join("..", "..", "..", "configs", name+".yaml"), nil)
		if err != nil {
			t.Fatal(err)
		}
		runs = append(runs, measure.RunResult{Label: name, Resolved: rc})
	}
	step := func(p int) float64 {
		if p >= 200 {
			return 2.5
		}
		return 2
	}
	s := section{rep: &measure.Report{TrainLen: 64, Runs: runs}, sps: []Series{
		{Label: "rope", Length: 1024, Seeds: 3, Positions: curve(1024, 64, step)},
		{Label: "alibi", Length: 1024, Seeds: 3, Positions: curve(1024, 64, func(int) float64 { return 2 })},
	}}
	var b strings.Builder
	s.breakpoints(&b)
	for _, want := range []string{"| rope | 2.000 | 197 (3.08x) | 199 (3.11x) |", "| alibi | 2.000 | does not | – |"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the table has no row %q:\n%s", want, b.String())
		}
	}
}

// TestKeptAndSummary runs the measure's recorder on a RoPE run of the default config whose loss
// steps up at 200: the results file keeps the critical dimension and the breakpoint, and the
// run's summary says both.
func TestKeptAndSummary(t *testing.T) {
	rc, err := config.LoadResolved(filepath.Join("..", "..", "..", "configs", "rope.yaml"), nil)
	if err != nil {
		t.Fatal(err)
	}
	train, eval := rc.Schemes()
	rec, err := Measure{}.Start(&measure.Evaluation{Resolved: rc, Scheme: eval, TrainScheme: train})
	if err != nil {
		t.Fatal(err)
	}
	r := rec.(*run)
	const n = 1024
	sum, count := make([]float64, n), make([]int, n)
	for p := range n {
		sum[p], count[p] = 128, 64 // loss 2
		if p >= 200 {
			sum[p] = 160 // loss 2.5
		}
	}
	r.Length(n).End(measure.PassLength{LengthResult: measure.LengthResult{Length: n, Applicable: true}, Sum: sum, Count: count})
	res := &measure.Result{Name: "rope", TrainLen: 64}
	if err := r.Record(t.TempDir(), res); err != nil {
		t.Fatal(err)
	}
	var k Kept
	if ok, err := res.Measurement("loss_by_position", &k); !ok || err != nil {
		t.Fatalf("no loss_by_position in the results: %v, %v", ok, err)
	}
	if c := k.Critical; c == nil || c.Dimension != 6 || c.Rotated != 16 || c.TExtra == nil || math.Abs(*c.TExtra-2*math.Pi*math.Pow(10, 1.5)) > 1e-9 {
		t.Errorf("critical %+v, want 6 of 16 and 2π·10^1.5", c)
	}
	if len(k.Breaks) != 1 || k.Breaks[0].At == nil || *k.Breaks[0].At != 197 || k.Breaks[0].Level != 2 {
		t.Errorf("breaks %+v, want one at 197 from level 2", k.Breaks)
	}
	sum64 := Measure{}.Summary(res)
	for _, want := range []string{"breaks at position 197 (3.08x)", "6 of 16 rotated", "predicts a limit of 199 (3.11x)"} {
		if !strings.Contains(sum64, want) {
			t.Errorf("summary %q lacks %q", sum64, want)
		}
	}
}
