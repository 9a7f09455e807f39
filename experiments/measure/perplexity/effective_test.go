package perplexity

import (
	"math"
	"testing"

	"extrapolate/experiments/measure"
)

// result is a run scored at 64 to 1024 with the given perplexities; NaN for a length the scheme
// cannot be scored at.
func result(ppl ...float64) *measure.Result {
	res := &measure.Result{Status: measure.OK, TrainLen: 64}
	for i, p := range ppl {
		l := measure.LengthResult{Length: 64 << i, Applicable: !math.IsNaN(p)}
		if l.Applicable {
			l.Perplexity = &ppl[i]
		}
		res.Lengths = append(res.Lengths, l)
	}
	return res
}

// TestEffective checks the effective length on both sides of its 10% bound: the longest length
// up to which every score holds, not the last one that does.
func TestEffective(t *testing.T) {
	for _, c := range []struct {
		name string
		res  *measure.Result
		want int
	}{
		{"RoPE", result(6.7, 7.2, 13, 19, 25), 128},       // 7.2 ≤ 7.37 < 13
		{"flat", result(7.5, 7.4, 7.5, 7.5, 7.6), 1024},   // ALiBi
		{"at the bound", result(10, 11, 11, 12, 12), 256}, // 11 = 1.1 × 10 holds, 12 does not
		{"dips back", result(7, 7.5, 7.2, 7.8, 7.6), 256}, // 7.8 > 7.7 at 512; 1024's 7.6 does not count
		{"breaks at once", result(6, 6.7, 6, 6, 6), 64},   // 6.7 > 6.6
		{"learned table", result(8, 8.5, nan, nan, nan), 128},
		{"no 1x", result(nan, 7, 7, 7, 7), 0},
	} {
		if got := Effective(c.res, 64); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}
	failed := result(6.7, 7, 7, 7, 7)
	failed.Status = measure.Failed
	if got := Effective(failed, 64); got != 0 {
		t.Errorf("a failed run: %d, want 0", got)
	}
}

var nan = math.NaN()
