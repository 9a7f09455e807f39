package claims

import (
	"testing"

	"extrapolate/experiments/measure"
)

// TestRegisterRefuses: a second claim of a registered id, an id that is no name and a
// claim without a check panic, and leave the registry as it was.
func TestRegisterRefuses(t *testing.T) {
	n := len(registered())
	check := func(*judging) (Verdict, string) { return Reproduced, "" }
	for _, c := range []claim{
		{id: "alibi_flat", check: check},
		{id: "../alibi", check: check},
		{id: "", check: check},
		{id: "new_claim"},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("register(%q) did not panic", c.id)
				}
			}()
			register(c)
		}()
	}
	if got := len(registered()); got != n {
		t.Fatalf("%d claims registered after the refusals, want %d", got, n)
	}
}

// TestJudgeEmpty judges a report with no run and no length: every claim is not applicable (or
// undecided), and none panics reading a length or a series that is not there.
func TestJudgeEmpty(t *testing.T) {
	results := Judge(&measure.Report{}, nil)
	if len(results) == 0 {
		t.Fatal("no claim judged")
	}
	for _, r := range results {
		if r.Verdict == Reproduced || r.Verdict == NotReproduced {
			t.Errorf("%s on an empty report: %s (%s)", r.ID, r.Verdict, r.Evidence)
		}
	}
}
