package logbias_test

import (
	"testing"

	"extrapolate/experiments/config"
	"extrapolate/experiments/measure"
	"extrapolate/experiments/plot"
	"extrapolate/position"
)

// TestFamily checks that a scheme registered from this package is drawn in the panel of the
// attention biases, as ALiBi is, from what it is (a bias on the scores), with no table of
// scheme names edited for it.
func TestFamily(t *testing.T) {
	rep := &measure.Report{Name: "families"}
	for _, scheme := range []string{"logbias", "alibi", "rope"} {
		c := config.Default()
		c.Name = "families"
		c.Position = position.Config{Scheme: scheme}
		if err := c.Complete(); err != nil {
			t.Fatal(err)
		}
		rc, err := c.Resolve()
		if err != nil {
			t.Fatal(err)
		}
		rep.Runs = append(rep.Runs, measure.RunResult{Label: scheme, Seed: 1, Resolved: rc, Result: &measure.Result{Status: measure.OK}})
	}
	rep.Aggregate()
	fam := rep.Families()
	want := map[string]plot.Family{"logbias": plot.Bias, "alibi": plot.Bias, "rope": plot.RoPE}
	for f, idx := range fam {
		for _, i := range idx {
			if label := rep.Series[i].Label; want[label] != plot.Family(f) {
				t.Errorf("%s in %q, want %q", label, plot.Family(f).Title(), want[label].Title())
			}
		}
	}
}
