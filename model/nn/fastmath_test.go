package nn

import (
	"math"
	"testing"
)

// TestFastMath compares the float32 approximations with the math package over their range.
func TestFastMath(t *testing.T) {
	worstExp, worstTanh := 0.0, 0.0
	for x := -87.0; x <= 88.0; x += 0.00137 {
		want := math.Exp(float64(float32(x)))
		got := float64(expf(float32(x)))
		if rel := math.Abs(got-want) / want; rel > worstExp {
			worstExp = rel
		}
	}
	for x := -12.0; x <= 12.0; x += 0.0001237 {
		want := math.Tanh(float64(float32(x)))
		got := float64(tanhf(float32(x)))
		if e := math.Abs(got-want) / math.Max(1e-30, math.Min(1, math.Abs(want))); e > worstTanh {
			worstTanh = e
		}
	}
	t.Logf("exp: worst relative error %.2g; tanh: %.2g", worstExp, worstTanh)
	if worstExp > 3e-7 || worstTanh > 3e-7 {
		t.Fatalf("exp error %.2g, tanh error %.2g: want below 3e-7", worstExp, worstTanh)
	}
	if expf(100) != float32(math.Inf(1)) || expf(-100) != 0 || !math.IsNaN(float64(expf(float32(math.NaN())))) {
		t.Fatal("expf's edge cases")
	}
	if tanhf(50) != 1 || tanhf(-50) != -1 || tanhf(0) != 0 {
		t.Fatal("tanhf's edge cases")
	}
}
