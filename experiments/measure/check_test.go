package measure

import (
	"math"
	"slices"
	"strings"
	"testing"

	"extrapolate/experiments/internal/testrun"
	"extrapolate/position"
)

// learnedResult is what a tiny learned-positions run, trained and scored on testrun's lengths
// (16, 32, 64), writes: its table holds 16 positions, so 32 and 64 are not applicable.
func learnedResult() *Result {
	loss := 2.0
	ppl := math.Exp(loss)
	na := "learned positions: 32 positions, but the table has 16 rows: not applicable"
	return &Result{Status: "ok", Lengths: []LengthResult{
		{Length: 16, Applicable: true, Loss: &loss, Perplexity: &ppl, Tokens: 512},
		{Length: 32, Reason: na},
		{Length: 64, Reason: na},
	}}
}

// TestCheckResult damages a run's results file in every way a report must not read as results,
// one at a time, and checks that each is refused, saying what is wrong; the results as the run
// wrote them pass.
func TestCheckResult(t *testing.T) {
	rc := testrun.Resolved(t, testrun.Config(t, "learned"))
	if err := CheckResult(learnedResult(), rc); err != nil {
		t.Fatalf("the run's own results: %v", err)
	}
	num := func(x float64) *float64 { return &x }
	for _, c := range []struct {
		name   string
		damage func(r *Result)
		want   string
	}{
		{"no status", func(r *Result) { r.Status = "" }, `status: "", want ok or failed`},
		{"failed without why", func(r *Result) { r.Status = "failed" }, "no error says why"},
		{"no lengths", func(r *Result) { r.Lengths = nil }, "lengths: none; the config evaluates at 16, 32, 64"},
		{"a length missing", func(r *Result) { r.Lengths = slices.Delete(r.Lengths, 1, 2) }, "lengths: length 32 missing"},
		{"the last length missing", func(r *Result) { r.Lengths = r.Lengths[:2] }, "lengths: length 64 missing"},
		{"out of order", func(r *Result) { r.Lengths[1], r.Lengths[2] = r.Lengths[2], r.Lengths[1] }, "out of order or given twice"},
		{"a length twice", func(r *Result) { r.Lengths = append(r.Lengths, r.Lengths[2]) }, "some given twice"},
		{"another length", func(r *Result) { r.Lengths[2].Length = 128 }, "lengths: length 128, not one of the config's"},
		{"negative perplexity", func(r *Result) { r.Lengths[0].Perplexity = num(-3) }, "length 16: perplexity -3, want a finite number of at least 1"},
		{"negative loss", func(r *Result) { r.Lengths[0].Loss = num(-1) }, "length 16: loss -1, want a finite number of at least 0"},
		{"perplexity not exp(loss)", func(r *Result) { r.Lengths[0].Perplexity = num(7) }, "perplexity 7, but the loss 2 gives"},
		{"no perplexity", func(r *Result) { r.Lengths[0].Perplexity = nil }, "length 16: scored, but without a loss or perplexity"},
		{"other tokens", func(r *Result) { r.Lengths[0].Tokens = 100 }, "tokens: 100, want eval.tokens 512"},
		{"not applicable where the scheme takes it", func(r *Result) {
			r.Lengths[0] = LengthResult{Length: 16, Reason: "edited"}
		}, "length 16: not applicable (\"edited\"), but the scheme takes 16 positions"},
		{"scored where the scheme cannot", func(r *Result) {
			r.Lengths[1] = LengthResult{Length: 32, Applicable: true, Loss: num(2), Perplexity: num(math.Exp(2)), Tokens: 512}
		}, "length 32: scored, but the scheme cannot take 32 positions (learned positions"},
		{"not applicable without why", func(r *Result) { r.Lengths[1].Reason = "" }, "length 32: not applicable, without the reason"},
		{"not applicable with numbers", func(r *Result) { r.Lengths[2].Loss = num(2) }, "length 64: not applicable, yet with a loss"},
		{"non-finite with a perplexity", func(r *Result) { r.Lengths[0].NonFinite, r.Lengths[0].Reason = true, "non-finite loss (NaN)" }, "length 16: not finite, yet with a perplexity"},
		{"unscaled without a scaling", func(r *Result) { r.Unscaled = r.Lengths }, "unscaled: given, but the run has no RoPE scaling"},
	} {
		res := learnedResult()
		c.damage(res)
		if err := CheckResult(res, rc); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error with %q", c.name, err, c.want)
		}
	}
	// A run with a RoPE scaling is also scored without it.
	cfg := testrun.Config(t, "rope")
	cfg.Position.Scaling = &position.Scaling{Type: "yarn", Factor: position.Factor{Auto: true}}
	res := learnedResult()
	res.Lengths = res.Lengths[:1]
	for _, n := range []int{32, 64} {
		res.Lengths = append(res.Lengths, LengthResult{Length: n, Applicable: true, Loss: num(3), Perplexity: num(math.Exp(3)), Tokens: 512})
	}
	scaled := testrun.Resolved(t, cfg)
	if err := CheckResult(res, scaled); err == nil || !strings.Contains(err.Error(), "unscaled: missing") {
		t.Errorf("a scaled run without its unscaled lengths: %v", err)
	}
	res.Unscaled = res.Lengths
	if err := CheckResult(res, scaled); err != nil {
		t.Errorf("a scaled run with its unscaled lengths: %v", err)
	}
}
