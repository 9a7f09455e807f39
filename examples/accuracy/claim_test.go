package accuracy_test

import (
	"testing"

	"extrapolate/examples/accuracy"
	"extrapolate/experiments/claims"
	"extrapolate/experiments/config"
	"extrapolate/experiments/measure"
)

// judgeALiBi judges the claims on ALiBi runs whose accuracy at 1x and 16x is given per seed, and
// returns accuracy_alibi_flat's verdict, "" when it was not judged.
func judgeALiBi(t *testing.T, scheme string, acc [][2]float64) claims.Verdict {
	t.Helper()
	rep := &measure.Report{Name: "syn", Seeds: []uint64{1, 2}, TrainLen: 64, Lengths: []int{64, 1024}}
	for s, a := range acc {
		c := config.Default()
		c.Position.Scheme = scheme
		c.Eval.Lengths, c.Eval.Measures = []int{64, 1024}, []string{"accuracy"}
		res := &measure.Result{Status: measure.OK, TrainLen: 64}
		var ls []accuracy.Length
		for i, n := range []int{64, 1024} {
			p := 7.0
			res.Lengths = append(res.Lengths, measure.LengthResult{Length: n, Applicable: true, Perplexity: &p, Loss: &p})
			ls = append(ls, accuracy.Length{Length: n, Applicable: true, Tokens: 1000, Right: int(1000 * a[i]), Accuracy: a[i]})
		}
		if err := res.SetMeasurement("accuracy", ls); err != nil {
			t.Fatal(err)
		}
		c.Name = "synthetic"
		if err := c.Complete(); err != nil {
			t.Fatal(err)
		}
		resolved, err := c.Resolve()
		if err != nil {
			t.Fatal(err)
		}
		rep.Runs = append(rep.Runs, measure.RunResult{Label: scheme, Seed: uint64(s + 1), Resolved: resolved, Result: res})
	}
	rep.Aggregate()
	for _, r := range claims.Judge(rep, nil) {
		if r.ID == "accuracy_alibi_flat" {
			return r.Verdict
		}
	}
	return ""
}

// TestALiBiFlatClaim checks the claim this package registers on both sides of its rule, and
// that a comparison without ALiBi does not judge it.
func TestALiBiFlatClaim(t *testing.T) {
	if v := judgeALiBi(t, "alibi", [][2]float64{{0.50, 0.49}, {0.52, 0.50}}); v != claims.Reproduced {
		t.Errorf("ALiBi at 0.97 of its 1x: %q, want reproduced", v)
	}
	if v := judgeALiBi(t, "alibi", [][2]float64{{0.50, 0.45}, {0.52, 0.49}}); v != claims.NotReproduced {
		t.Errorf("ALiBi at 0.92 of its 1x: %q, want not reproduced", v)
	}
	if v := judgeALiBi(t, "rope", [][2]float64{{0.50, 0.2}}); v != "" {
		t.Errorf("no ALiBi run: judged %q, want left out", v)
	}
	if !claims.Known("accuracy_alibi_flat") {
		t.Error("the claim is not known to comparisons' claims: lists")
	}
}
