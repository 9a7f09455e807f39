package schemeweights_test

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"extrapolate/checkpoint"
	"extrapolate/experiments/compare"
	"extrapolate/experiments/config"
	"extrapolate/experiments/measure"
	"extrapolate/experiments/measure/schemeweights"
	"extrapolate/experiments/training"
	"extrapolate/internal/cmdtest"
)

// grid writes a comparison of FIRE, KERPLE and ALiBi over two points at training lengths 16 and
// 32, FIRE and KERPLE with the measure, and returns its path.
func grid(t *testing.T, dir string) string {
	t.Helper()
	cfg := `name: base
data: {corpus: text, path: ` + cmdtest.TextCorpus(t) + `}
model: {d_model: 16, layers: 2, heads: 2}
position: {scheme: fire, hidden: 8, threshold_init: 24}
train: {seq_len: 16, batch_size: 4, steps: 12, warmup: 2}
eval: {lengths: [16, 32, 64], tokens: 512, batch_tokens: 512, measures: [scheme_weights]}
`
	comp := `comparison: tiny
seeds: [1, 2]
runs:
  - {config: base, label: fire}
  - {config: base, label: kerple, set: {position: {scheme: kerple}}}
  - {config: base, label: alibi, set: {position: {scheme: alibi}, eval.measures: []}}
grid:
  - {name: L16}
  - {name: L32, set: {train.seq_len: 32, train.batch_size: 2, eval.lengths: [32, 64, 128], eval.tokens: 512}}
`
	for name, text := range map[string]string{"base.yaml": cfg, "tiny.yaml": comp} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "tiny.yaml")
}

// TestFIREThresholdByLength runs the grid and checks what the measure kept of every FIRE run
// against its checkpoint's weights, read here on their own: c, m, the threshold |m·L0| and the
// MLP's input and bias at the farthest key of each length, computed from the formula. It checks
// KERPLE's r1 and r2 too, and that the report's sections show them.
func TestFIREThresholdByLength(t *testing.T) {
	dir := t.TempDir()
	plan, err := compare.LoadPlan(grid(t, dir), nil)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "results")
	if _, err := (&compare.Runner{Plan: plan, Dir: out, Command: "test"}).Execute(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, point := range []struct {
		name     string
		trainLen int
		lengths  []int
	}{{"L16", 16, []int{16, 32, 64}}, {"L32", 32, []int{32, 64, 128}}} {
		for _, seed := range []string{"1", "2"} {
			run := filepath.Join(out, point.name, compare.RunsDir, "fire-s"+seed)
			checkFIRE(t, run, point.trainLen, point.lengths)
			checkKERPLE(t, filepath.Join(out, point.name, compare.RunsDir, "kerple-s"+seed))
		}
		if _, err := os.Stat(filepath.Join(out, point.name, compare.RunsDir, "alibi-s1", schemeweights.RunJSON)); err == nil {
			t.Errorf("%s: alibi, whose eval.measures does not name it, has %s", point.name, schemeweights.RunJSON)
		}
		md, _ := os.ReadFile(filepath.Join(out, point.name, compare.ReportFile))
		for _, want := range []string{"## Position schemes' learned weights", "| fire | 1 | ", "| kerple | 1 | "} {
			if !strings.Contains(string(md), want) {
				t.Errorf("%s's REPORT.md lacks %q:\n%s", point.name, want, md)
			}
		}
	}
	md, _ := os.ReadFile(filepath.Join(out, compare.ReportFile))
	for _, want := range []string{"## FIRE's threshold by training length", "| L16 | 16 | fire | 0 | ", "| L32 | 32 | fire | 1 | "} {
		if !strings.Contains(string(md), want) {
			t.Errorf("the grid's REPORT.md lacks %q:\n%s", want, md)
		}
	}
	for _, f := range []string{schemeweights.GridCSV, filepath.Join("L32", schemeweights.ComparisonCSV)} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Error(err)
		}
	}
}

// weightsOf reads a run's checkpoint's tensors by name, as float64s.
func weightsOf(t *testing.T, run string) map[string][]float64 {
	t.Helper()
	var meta json.RawMessage
	ts, err := checkpoint.Read(filepath.Join(run, measure.CheckpointFile), &meta)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]float64{}
	for _, x := range ts {
		switch d := x.Value.Data().(type) {
		case []float64:
			out[x.Name] = d
		case []float32:
			for _, v := range d {
				out[x.Name] = append(out[x.Name], float64(v))
			}
		default:
			t.Fatalf("%s: %s of %v", run, x.Name, x.Value.Dtype())
		}
	}
	return out
}

// recorded reads what the measure kept in a run's results file.
func recorded(t *testing.T, run string) *schemeweights.Weights {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(run, measure.ResultsJSON))
	if err != nil {
		t.Fatal(err)
	}
	var res measure.Result
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	w, err := schemeweights.Of(&res)
	if err != nil || w == nil {
		t.Fatalf("%s: %v, %v", run, w, err)
	}
	return w
}

func checkFIRE(t *testing.T, run string, trainLen int, lengths []int) {
	t.Helper()
	w, ck := recorded(t, run), weightsOf(t, run)
	if w.Scheme != "fire" || w.TrainLen != trainLen || len(w.FIRE) != 2 {
		t.Fatalf("%s: %+v", run, w)
	}
	const l0, heads, hidden = 24, 2, 8
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-5*math.Max(1, math.Abs(b)) }
	for l, f := range w.FIRE {
		c, m := ck["fire.c"][l], ck["fire.m"][l]
		if !near(f.C, c) || !near(f.M, m) || !near(f.Threshold, math.Abs(m*l0)) {
			t.Errorf("%s layer %d: c %v m %v threshold %v, the checkpoint's c %v m %v", run, l, f.C, f.M, f.Threshold, c, m)
		}
		psi := func(x float64) float64 { return math.Log1p(math.Abs(c) * x) }
		input := func(n int) float64 { return psi(float64(n-1)) / (psi(math.Max(math.Abs(m*l0), float64(n-1))) + 1e-6) }
		if !near(f.TrainedInput, input(trainLen)) {
			t.Errorf("%s layer %d: input in training %v, want %v", run, l, f.TrainedInput, input(trainLen))
		}
		for i, far := range f.Far {
			if far.Length != lengths[i] || !near(far.Input, input(far.Length)) {
				t.Errorf("%s layer %d: far %+v, want length %d, input %v", run, l, far, lengths[i], input(lengths[i]))
			}
			for h, b := range far.Bias {
				if want := mlp(ck, l, h, heads, hidden, far.Input); !near(b, want) {
					t.Errorf("%s layer %d head %d at %d: bias %v, want %v", run, l, h, far.Length, b, want)
				}
			}
		}
	}
}

// mlp is FIRE's MLP of layer l at input x, for head h, from the checkpoint's weights.
func mlp(ck map[string][]float64, l, h, heads, hidden int, x float64) float64 {
	out := ck["fire.b2"][l*heads+h]
	for k := range hidden {
		if a := ck["fire.w1"][l*hidden+k]*x + ck["fire.b1"][l*hidden+k]; a > 0 {
			out += ck["fire.w2"][(l*hidden+k)*heads+h] * a
		}
	}
	return out
}

func checkKERPLE(t *testing.T, run string) {
	t.Helper()
	w, ck := recorded(t, run), weightsOf(t, run)
	if w.Scheme != "kerple" || len(w.KERPLE) != 2 {
		t.Fatalf("%s: %+v", run, w)
	}
	for l, k := range w.KERPLE {
		for h := range 2 {
			if k.R1[h] != ck["kerple.r1"][l*2+h] || k.R2[h] != ck["kerple.r2"][l*2+h] {
				t.Errorf("%s layer %d head %d: r1 %v r2 %v, the checkpoint's %v %v", run, l, h, k.R1[h], k.R2[h], ck["kerple.r1"][l*2+h], ck["kerple.r2"][l*2+h])
			}
		}
	}
}

// TestWindowedSchemeRecorded: a FIRE and a KERPLE run in a sliding window (position.window),
// whose scheme the window wraps, still record their weights, one entry per layer.
func TestWindowedSchemeRecorded(t *testing.T) {
	corpus := cmdtest.TextCorpus(t)
	for _, scheme := range []string{"fire", "kerple"} {
		path := filepath.Join(t.TempDir(), scheme+".yaml")
		cfg := `name: ` + scheme + `
data: {corpus: text, path: ` + corpus + `}
model: {d_model: 16, layers: 2, heads: 2}
position: {scheme: ` + scheme + `, window: 8}
train: {seq_len: 16, batch_size: 4, steps: 4, warmup: 1}
eval: {lengths: [16, 32], tokens: 256, batch_tokens: 256, measures: [scheme_weights]}
`
		if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
			t.Fatal(err)
		}
		rc, err := config.LoadResolved(path, nil)
		if err != nil {
			t.Fatal(err)
		}
		res, err := (&training.Run{Resolved: rc, Dir: filepath.Join(t.TempDir(), scheme)}).Execute(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		w, err := schemeweights.Of(res)
		if err != nil || w == nil || len(w.FIRE)+len(w.KERPLE) != 2 {
			t.Errorf("%s in a window: weights %+v, %v; want two layers of them", scheme, w, err)
		}
	}
}
