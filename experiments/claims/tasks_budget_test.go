package claims

import (
	"strings"
	"testing"

	"extrapolate/task"
)

// TestSolvableBeyondBudget checks tasks_solvable's three verdicts: reproduced when every task
// is learned; undecided when the only tasks not learned are beyond the budget, naming their
// pilots; not reproduced when a task not learned is not, naming it.
func TestSolvableBeyondBudget(t *testing.T) {
	learned := scores{"rope": {1, 0, 0}, "nope": {0.5, 0, 0}}
	unlearned := scores{"rope": {0.5, 0, 0}, "nope": {0.52, 0, 0}}
	for name, c := range map[string]struct {
		tasks    map[string]scores
		want     Verdict
		evidence []string
	}{
		"every task learned":              {map[string]scores{"copy": learned, "parity": learned}, Reproduced, nil},
		"parity and counting beyond":      {map[string]scores{"copy": learned, "parity": unlearned, "counting": unlearned}, Undecided, []string{"parity (pilots of plain RoPE: " + beyondBudget["parity"], "counting (pilots of plain RoPE: " + beyondBudget["counting"]}},
		"copy not learned, no pilots":     {map[string]scores{"copy": unlearned, "parity": unlearned}, NotReproduced, []string{"with no pilots beyond the budget: copy."}},
		"mqar not learned, parity beyond": {map[string]scores{"copy": learned, "parity": unlearned, "mqar": unlearned}, NotReproduced, []string{"with no pilots beyond the budget: mqar.", "beyond the budget by their pilots: parity."}},
	} {
		for _, r := range Judge(taskReport(t, c.tasks), nil) {
			if r.ID != "tasks_solvable" {
				continue
			}
			if r.Verdict != c.want {
				t.Errorf("%s: %s, want %s (%s)", name, r.Verdict, c.want, r.Evidence)
			}
			for _, e := range c.evidence {
				if !strings.Contains(r.Evidence, e) {
					t.Errorf("%s: evidence %q lacks %q", name, r.Evidence, e)
				}
			}
		}
	}
	// Every entry names a registered task and gives numbers.
	for name, pilots := range beyondBudget {
		if _, err := task.Lookup(name); err != nil {
			t.Error(err)
		}
		if !strings.ContainsAny(pilots, "0123456789") {
			t.Errorf("%s: pilots %q give no number", name, pilots)
		}
	}
}
