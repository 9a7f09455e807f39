package position

import (
	"math"
	"testing"
)

// TestCritical checks the critical dimension against the paper's closed form, d_extra =
// 2⌈(d/2)·log_β(T/2π)⌉ and T_extra = 2π·β^(d_extra/d), computed here: for this project's
// default model (head dimension 16, β = 10⁴, T = 64) d_extra = 6 and T_extra = 2π·10^1.5 ≈ 198.7;
// for LLaMA 2 (d = 128, β = 10⁴, T = 4096) the paper's 92. Then a partial rotation (d its
// rotated 8 of 16) and p-RoPE, whose stopped pairs never turn.
func TestCritical(t *testing.T) {
	closed := func(d int, base float64, trainLen int) (int, float64) {
		x := float64(d) / 2 * math.Log(float64(trainLen)/(2*math.Pi)) / math.Log(base)
		de := 2 * int(math.Ceil(x))
		return de, 2 * math.Pi * math.Pow(base, float64(de)/float64(d))
	}
	for _, c := range []struct {
		name          string
		dModel, heads int
		trainLen      int
		params        map[string]any
		d             int // rotated dimensions
		base          float64
		want          int
	}{
		{"default", 64, 4, 64, map[string]any{"base": 10000}, 16, 10000, 6},
		{"llama2", 4096, 32, 4096, map[string]any{"base": 10000}, 128, 10000, 92},
		{"base 500", 64, 4, 64, map[string]any{"base": 500}, 16, 500, 6},
		{"partial", 64, 4, 64, map[string]any{"base": 10000, "rotary_fraction": 0.5}, 8, 10000, 4},
	} {
		s, err := New(Spec{DModel: c.dModel, Heads: c.heads, TrainLen: c.trainLen, Config: Config{Scheme: "rope", Params: c.params}})
		if err != nil {
			t.Fatal(err)
		}
		got, ok, err := CriticalOf(s, c.trainLen)
		if err != nil || !ok {
			t.Fatalf("%s: %v, %v", c.name, ok, err)
		}
		de, te := closed(c.d, c.base, c.trainLen)
		if got.Dimension != de || de != c.want || math.Abs(got.TExtra-te) > 1e-9*te || got.Rotated != c.d {
			t.Errorf("%s: %+v (T_extra %.6g), want d_extra %d (%d by the closed form), T_extra %.6g, %d rotated", c.name, got, got.TExtra, c.want, de, te, c.d)
		}
	}
	if got, _, _ := CriticalOf(rope(t, 16, 10000, 64, nil), 64); math.Abs(got.TExtra-2*math.Pi*math.Pow(10, 1.5)) > 1e-9 {
		t.Errorf("default T_extra %v, want 2π·10^1.5", got.TExtra)
	}
	// p-RoPE at frequency_fraction 0.25 of 8 pairs turns the 2 fastest: both fit in 64 (periods
	// 2π and 2π·10^0.5), and the next pair is stopped: no limit from the critical dimension.
	s, err := New(Spec{DModel: 64, Heads: 4, TrainLen: 64, Config: Config{Scheme: "rope", Params: map[string]any{"frequency_fraction": 0.25}}})
	if err != nil {
		t.Fatal(err)
	}
	if got, _, _ := CriticalOf(s, 64); got.Dimension != 4 || !math.IsInf(got.TExtra, 1) {
		t.Errorf("p-RoPE: %+v (T_extra %v), want d_extra 4 and no limit", got, got.TExtra)
	}
	if _, ok, err := CriticalOf(ALiBi{Slopes: Slopes(4)}, 64); ok || err != nil {
		t.Errorf("ALiBi: a critical dimension (%v, %v), want none", ok, err)
	}
}
