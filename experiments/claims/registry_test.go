package claims

import "testing"

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
