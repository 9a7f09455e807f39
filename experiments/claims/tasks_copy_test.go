package claims

import "testing"

// TestHardALiBiCopiesClaim checks tasks_hard_alibi_copies on both sides of its rule (half the
// strings at 2x), undecided where Hard-ALiBi does not copy at 1x, and not judged at all on a
// comparison without a Hard-ALiBi series.
func TestHardALiBiCopiesClaim(t *testing.T) {
	flip := scores{"rope": {1, 0.8, 0.5}}
	const id = "tasks_hard_alibi_copies"
	for _, c := range []struct {
		name  string
		exact [3]float64
		want  Verdict
	}{
		{"copies half at 2x", [3]float64{1, 0.5, 0.1}, Reproduced},
		{"copies 49% at 2x", [3]float64{1, 0.49, 0.3}, NotReproduced},
		{"copies nothing past 1x", [3]float64{1, 0, 0}, NotReproduced},
		{"copies 89% at 1x", [3]float64{0.89, 0.8, 0.8}, Undecided},
	} {
		copyExact := scores{"hard_alibi": c.exact, "rope": {1, 0, 0}}
		if got := judgeTasks(t, on(copyExact, flip))[id]; got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
	if v, ok := judgeTasks(t, on(scores{"rope": {1, 0, 0}}, flip))[id]; ok {
		t.Errorf("judged (%s) on a comparison with no Hard-ALiBi series", v)
	}
}
