package claims

import (
	"strings"
	"testing"

	"extrapolate/experiments/measure"
)

// TestEnoughSeeds checks the seeds precondition: a claim that ranks means over seeds is
// undecided on fewer seeds with results than it needs, whichever way its rule would go, and
// says so with the seeds; a claim that needs one seed is judged on one; a claim not
// applicable stays so.
func TestEnoughSeeds(t *testing.T) {
	copyExact := scores{"nope": {1, 0.6, 0.2}, "t5": {1, 0.5, 0.1}, "rope": {0.95, 0.05, 0}, "learned": {0.9, 0, 0}, "sinusoidal": {0.92, 0.1, 0}}
	flip := scores{"nope": {1, 0.9, 0.8}, "t5": {1, 0.9, 0.7}, "rope": {1, 0.8, 0.5}, "learned": {1, 0, 0}, "sinusoidal": {1, 0.5, 0.2}}
	lowNoPE := scores{}
	for k, v := range copyExact {
		lowNoPE[k] = v
	}
	lowNoPE["nope"] = [3]float64{1, 0, 0}
	lowFlip := scores{}
	for k, v := range flip {
		lowFlip[k] = v
	}
	lowFlip["nope"] = [3]float64{1, 0.55, 0}
	judge := func(rep *measure.Report) map[string]Result {
		out := map[string]Result{}
		for _, r := range Judge(rep, nil) {
			out[r.ID] = r
		}
		return out
	}
	failSeed := func(rep *measure.Report, seed uint64) *measure.Report {
		for i := range rep.Runs {
			if rep.Runs[i].Seed == seed {
				res := *rep.Runs[i].Result
				res.Status, res.Error = measure.Failed, "diverged"
				rep.Runs[i].Result = &res
			}
		}
		return rep
	}
	for name, c := range map[string]struct {
		rep       *measure.Report
		want      Verdict
		evidence  string // in the evidence, for an undecided verdict
		wouldBe   Verdict
		singleArm Verdict // tasks_rope_copy_fails, which needs one seed
	}{
		"three seeds":               {taskReport(t, on(copyExact, flip)), Reproduced, "", "", Reproduced},
		"one seed, would reproduce": {seedsReport(t, on(copyExact, flip), 7), Undecided, "Results from 1 of the 3 seeds its rule needs (7)", Reproduced, Reproduced},
		"one seed, would fail":      {seedsReport(t, on(lowNoPE, lowFlip), 7), Undecided, "Results from 1 of the 3 seeds its rule needs (7)", NotReproduced, Reproduced},
		"a seed's runs failed":      {failSeed(seedsReport(t, on(copyExact, flip), 1, 2, 3), 3), Undecided, "Results from 2 of the 3 seeds its rule needs (1, 2)", Reproduced, Reproduced},
	} {
		got := judge(c.rep)
		r := got["tasks_nope_ranking"]
		if r.Verdict != c.want {
			t.Errorf("%s: tasks_nope_ranking is %s, want %s (%s)", name, r.Verdict, c.want, r.Evidence)
		}
		if c.evidence != "" && (!strings.Contains(r.Evidence, c.evidence) || !strings.Contains(r.Evidence, "it would be "+string(c.wouldBe))) {
			t.Errorf("%s: evidence %q, want it to contain %q and what it would be (%s)", name, r.Evidence, c.evidence, c.wouldBe)
		}
		if !strings.Contains(r.Rule, "fewer than 3 seeds") {
			t.Errorf("%s: the rule does not state the seeds it needs: %q", name, r.Rule)
		}
		if v := got["tasks_rope_copy_fails"].Verdict; v != c.singleArm {
			t.Errorf("%s: tasks_rope_copy_fails is %s, want %s", name, v, c.singleArm)
		}
		if strings.Contains(got["tasks_rope_copy_fails"].Rule, "seeds with results") {
			t.Errorf("%s: a one-seed claim states a seeds precondition", name)
		}
	}
	// A claim not applicable on one seed stays not applicable: no series, nothing to count.
	one := seedsReport(t, map[string]scores{"copy": {"rope": {1, 0, 0}}}, 7)
	if v := judge(one)["tasks_nope_ranking"].Verdict; v != NotApplicable {
		t.Errorf("NoPE absent, one seed: tasks_nope_ranking is %s, want not applicable", v)
	}
}
