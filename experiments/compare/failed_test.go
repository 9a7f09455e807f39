package compare

import (
	"strings"
	"testing"

	"extrapolate/experiments/claims"
	"extrapolate/experiments/measure"
	"extrapolate/experiments/measure/perplexity"
)

// TestFailedRunsAreNotNotApplicable checks that a length no seed scored because every run of
// the series failed reads as failed, not as "not applicable", which only a scheme declares:
// in the table, the CSV and the claims, which are undecided; and that a series with one seed
// failed says so beside its mean.
func TestFailedRunsAreNotNotApplicable(t *testing.T) {
	rep := synthetic(map[string][][]float64{
		"alibi":  {{7.5, 7.5, 7.5, 7.5, 7.5}, {7.6, 7.6, 7.6, 7.6, 7.6}},
		"kerple": {{7.4, 7.4, 7.4, 7.4, 7.4}, {7.3, 7.3, 7.3, 7.3, 7.3}},
	}, synthConfigs)
	failed := &measure.Result{Status: "failed", Error: "training diverged: loss is NaN at step 3 (train)"}
	for i, r := range rep.Runs {
		if r.Label == "alibi" || (r.Label == "kerple" && r.Seed == 2) {
			rep.Runs[i].Result = failed
		}
	}
	rep.Series = nil
	rep.aggregate()
	rep.judge()
	v := verdicts(rep)
	for _, id := range []string{"alibi_flat", "kerple_matches_alibi"} {
		if v[id] != claims.Undecided {
			t.Errorf("%s: %s, want undecided", id, v[id])
		}
	}
	for _, c := range rep.Claims {
		if c.ID == "alibi_flat" && !strings.Contains(c.Evidence, "its runs failed for seeds [1 2]") {
			t.Errorf("alibi_flat evidence %q does not say the runs failed", c.Evidence)
		}
	}
	alibi, kerple := rep.Series[0], rep.Series[1]
	if st, _ := alibi.At(64); measure.FormatStat(st) != "failed" || st.NotApplicable != "" {
		t.Errorf("alibi at 1x: %+v, cell %q; want failed, not applicable by nothing", st, measure.FormatStat(st))
	}
	if st, _ := kerple.At(64); measure.FormatStat(st) != "7.40 ± 0.00 (1 failed)" {
		t.Errorf("kerple at 1x: cell %q, want seed 1's mean and the failed seed said", measure.FormatStat(st))
	}
	if csv := string(perplexity.CSV(&rep.Report)); !strings.Contains(csv, "alibi,alibi,mean,64,1,,,failed for seeds [1 2],") || strings.Contains(csv, "not applicable") {
		t.Errorf("%s:\n%s", perplexity.ComparisonCSV, csv)
	}
}
