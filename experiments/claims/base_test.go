package claims

import (
	"math"
	"testing"

	"extrapolate/experiments/measure"
	"extrapolate/experiments/measure/positions"
	"extrapolate/position"
)

// TestJudgeBreaks checks breakpoint_follows_critical's rule on both sides of its factor of 2,
// for a series that breaks and for one that does not by its longest length.
func TestJudgeBreaks(t *testing.T) {
	one := func(label string, tExtra float64) based {
		return based{s: &measure.Series{Label: label}, pred: positions.Prediction{Critical: position.Critical{TExtra: tExtra}}}
	}
	for _, c := range []struct {
		name string
		br   positions.SeriesBreak
		want Verdict
	}{
		{"at 1.5 T_extra", positions.SeriesBreak{Label: "a", Length: 1024, At: 150, Broke: true}, Reproduced},
		{"at 2 T_extra", positions.SeriesBreak{Label: "a", Length: 1024, At: 200, Broke: true}, Reproduced},
		{"at 2.1 T_extra", positions.SeriesBreak{Label: "a", Length: 1024, At: 210, Broke: true}, NotReproduced},
		{"at 0.4 T_extra", positions.SeriesBreak{Label: "a", Length: 1024, At: 40, Broke: true}, NotReproduced},
		{"no break by 1.8 T_extra", positions.SeriesBreak{Label: "a", Length: 180}, Reproduced},
		{"no break by 3 T_extra", positions.SeriesBreak{Label: "a", Length: 300}, NotReproduced},
	} {
		v, ev := judgeBreaks([]based{one("a", 100)}, []positions.SeriesBreak{c.br})
		if v != c.want {
			t.Errorf("%s: %s (%s), want %s", c.name, v, ev, c.want)
		}
	}
	if v, _ := judgeBreaks([]based{one("a", 100), one("b", 100)}, []positions.SeriesBreak{{Label: "a", At: 150, Broke: true}}); v != Undecided {
		t.Errorf("a series without loss by position: %s, want undecided", v)
	}
}

// TestBaseOf checks that a series' base is read back from its ladder of frequencies.
func TestBaseOf(t *testing.T) {
	for _, base := range []float64{10, 500, 1e4, 1e6} {
		inv := make([]float64, 8)
		for i := range inv {
			inv[i] = math.Pow(base, -float64(2*i)/16)
		}
		if got := baseOf(positions.Prediction{InvFreq: inv}); math.Abs(got-base) > 1e-9*base {
			t.Errorf("base %g read back as %g", base, got)
		}
	}
}
