package compare

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"extrapolate/experiments/claims"
	"extrapolate/experiments/internal/testrun"
	"extrapolate/experiments/measure"
	"extrapolate/experiments/measure/perplexity"
	"extrapolate/experiments/measure/positions"
	"extrapolate/experiments/training"
	"extrapolate/position"
)

// nanBias is a test's scheme whose bias is NaN at distances of the training length and more: a
// model trained with it is fine at the training length and has a NaN loss past it, as xPos had
// when its scales overflowed float32.
type nanBias struct{ heads, trainLen int }

func init() {
	position.Register("test_nan_bias", func(s position.Spec) (position.Scheme, error) {
		if err := s.Config.Decode(&struct{}{}); err != nil {
			return nil, err
		}
		return nanBias{s.Heads, s.TrainLen}, nil
	})
}

func (nanBias) Name() string { return "test_nan_bias" }

func (b nanBias) Bias(n int) (*position.Bias, error) {
	bias := position.NewBias(b.heads, n, false)
	for h := 0; h < b.heads; h++ {
		for d := b.trainLen; d < n; d++ {
			bias.Values[h*n+d] = math.NaN()
		}
	}
	return bias, nil
}

// TestNonFiniteLengthRecorded checks that a NaN loss at one length is recorded as missing with
// the reason, in every file and in the summary, and does not cost the run its other lengths.
func TestNonFiniteLengthRecorded(t *testing.T) {
	c := testrun.Config(t, "test_nan_bias")
	r := &training.Run{Resolved: testrun.Resolved(t, c), Dir: filepath.Join(t.TempDir(), "out")}
	res, err := r.Execute(context.Background())
	if err != nil {
		t.Fatalf("a NaN loss at evaluation stopped the run: %v", err)
	}
	if l, _ := res.At(16); l.NonFinite || l.Perplexity == nil || !(*l.Perplexity > 1) {
		t.Fatalf("at the training length: %+v, want a finite perplexity", l)
	}
	for _, n := range []int{32, 64} {
		l, _ := res.At(n)
		if !l.NonFinite || !l.Applicable || l.Loss != nil || l.Perplexity != nil || l.Reason != "non-finite loss (NaN)" {
			t.Fatalf("at %d: %+v, want no numbers and the reason", n, l)
		}
	}
	if len(res.Warnings) != 2 || !strings.Contains(res.Warnings[0], "length 32") {
		t.Fatalf("warnings %q, want one per non-finite length", res.Warnings)
	}
	b, err := os.ReadFile(filepath.Join(r.Dir, measure.ResultsJSON))
	if err != nil {
		t.Fatal(err)
	}
	var back measure.Result
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if l, _ := back.At(64); !l.NonFinite || l.Loss != nil || len(back.Warnings) != 2 {
		t.Fatalf("ppl_vs_len.json: %s", b)
	}
	csv, _ := os.ReadFile(filepath.Join(r.Dir, perplexity.RunCSV))
	if !strings.Contains(string(csv), "\n64,4,,,512,true,non-finite loss (NaN),") {
		t.Fatalf("ppl_vs_len.csv:\n%s", csv)
	}
	for _, f := range []string{perplexity.RunPNG, positions.RunJSON} {
		if _, err := os.Stat(filepath.Join(r.Dir, f)); err != nil {
			t.Error(err)
		}
	}
	sum := measure.Summary(res)
	if !strings.Contains(sum, "(non-finite loss (NaN))") || !strings.Contains(sum, "warning: non-finite loss (NaN) at length 64") {
		t.Fatalf("summary:\n%s", sum)
	}
	// Its results count as done: a comparison does not run it again.
	if got, err := readResult(Planned{Resolved: r.Resolved, Dir: r.Dir}); err != nil || got == nil {
		t.Fatalf("readResult: %v, %v", got, err)
	}
}

// TestComparisonCarriesOnPastNonFinite runs a comparison whose first run has a NaN loss past
// the training length: the next run and the report follow, and the report says what is missing.
func TestComparisonCarriesOnPastNonFinite(t *testing.T) {
	dir := t.TempDir()
	cfg := `name: base
data: {corpus: text, path: ` + testrun.Corpus(t) + `}
model: {d_model: 16, layers: 1, heads: 2}
position: {scheme: test_nan_bias}
train: {seq_len: 16, batch_size: 4, steps: 10}
eval: {lengths: [16, 64], tokens: 512, batch_tokens: 256}
`
	os.WriteFile(filepath.Join(dir, "base.yaml"), []byte(cfg), 0o644)
	os.WriteFile(filepath.Join(dir, "c.yaml"), []byte(`comparison: c
seeds: [1]
runs:
  - {config: base, label: nan}
  - {config: base, label: alibi, set: {position.scheme: alibi}}
`), 0o644)
	c, err := LoadPlan(filepath.Join(dir, "c.yaml"), nil)
	if err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	r := &Runner{Plan: c, Dir: filepath.Join(dir, "out"), Progress: &log, Command: "test"}
	rep, err := r.Execute(context.Background())
	if err != nil || rep == nil {
		t.Fatalf("comparison: %v, report %v", err, rep)
	}
	if !strings.Contains(log.String(), "warning: non-finite loss (NaN) at length 64") {
		t.Fatalf("the log does not say:\n%s", log.String())
	}
	st, _ := rep.Series[0].At(64)
	if st.Seeds != 0 || len(st.NonFinite) != 1 || st.NonFinite[0] != 1 || st.NotApplicable != "" {
		t.Fatalf("nan at 64: %+v, want seed 1 non-finite", st)
	}
	if a, _ := rep.Series[1].At(64); a.Seeds != 1 || a.NonFinite != nil {
		t.Fatalf("alibi at 64: %+v", a)
	}
	md, _ := os.ReadFile(filepath.Join(r.Dir, ReportFile))
	if !strings.Contains(string(md), "| nan | test_nan_bias |") || !strings.Contains(string(md), "non-finite |") ||
		!strings.Contains(string(md), "**nan at 64: non-finite loss (NaN)** for seeds [1]") {
		t.Fatalf("REPORT.md:\n%s", md)
	}
	b, _ := os.ReadFile(filepath.Join(r.Dir, ComparisonJSON))
	if !strings.Contains(string(b), `"nonfinite_seeds": [`) {
		t.Fatalf("%s lacks the non-finite seeds", ComparisonJSON)
	}
}

// TestClaimsUndecidedOnNonFinite checks that a claim needing a length where a seed's loss was
// not finite is undecided, saying so, rather than judged on the other seeds; that means and
// standard deviations leave the seed out, and that the report is written.
func TestClaimsUndecidedOnNonFinite(t *testing.T) {
	inf := math.Inf(1)
	rep := synthetic(map[string][][]float64{
		// Seed 2's loss overflowed at 16x; seed 1 alone would look flat.
		"alibi":      {{7.5, 7.5, 7.5, 7.5, 7.5}, {7.5, 7.5, 7.5, 7.5, inf}},
		"kerple":     {{7.4, 7.4, 7.4, 7.4, 7.4}, {7.4, 7.4, 7.4, 7.4, 7.4}},
		"sinusoidal": {{11, 25, 50, 57, 51}, {12, 26, 48, 60, 55}},
		// Every seed's loss overflowed at 4x.
		"rope":      {{6.7, 7.2, inf, 19.5, 24.9}, {6.8, 7.3, inf, 20, 25}},
		"rope_yarn": {{6.7, 6.8, 7.4, 9.0, 12.8}, {6.8, 6.9, 7.5, 9.1, 13}},
	}, synthConfigs)
	v := verdicts(rep)
	for _, id := range []string{"alibi_flat", "kerple_matches_alibi", "scaling_rescues_rope"} {
		if v[id] != claims.Undecided {
			t.Errorf("%s: %s, want undecided", id, v[id])
		}
	}
	if v["sinusoidal_degrades"] != claims.Reproduced {
		t.Errorf("sinusoidal_degrades: %s: it needs no non-finite number", v["sinusoidal_degrades"])
	}
	for _, c := range rep.Claims {
		if c.ID == "alibi_flat" && !strings.Contains(c.Evidence, "non-finite loss (+Inf) for seeds [2]") {
			t.Errorf("alibi_flat evidence %q does not name the seed and reason", c.Evidence)
		}
	}
	series := map[string]*measure.Series{}
	for _, s := range rep.Series {
		series[s.Label] = s
	}
	st, _ := series["alibi"].At(1024)
	if st.Seeds != 1 || st.PPLMean != 7.5 || st.PPLStd != 0 || len(st.NonFinite) != 1 || st.NonFinite[0] != 2 {
		t.Fatalf("alibi at 16x: %+v, want seed 1's alone and seed 2 non-finite", st)
	}
	if got := measure.FormatStat(st); got != "7.50 ± 0.00 (1 non-finite)" {
		t.Errorf("cell %q", got)
	}
	if st, _ := series["rope"].At(256); measure.FormatStat(st) != "non-finite" || st.NotApplicable != "" {
		t.Errorf("rope at 4x: %+v, %q", st, measure.FormatStat(st))
	}
	dir := t.TempDir()
	if err := rep.write(dir); err != nil {
		t.Fatal(err)
	}
	csv, _ := os.ReadFile(filepath.Join(dir, perplexity.ComparisonCSV))
	if !strings.Contains(string(csv), "alibi,alibi,mean,1024,16,") || !strings.Contains(string(csv), "non-finite loss (+Inf) for seeds [2], left out") {
		t.Fatalf("%s:\n%s", perplexity.ComparisonCSV, csv)
	}
}
