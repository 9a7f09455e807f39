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
		got := float64(tanhRational(float32(x)))
		if e := math.Abs(got-want) / math.Max(1e-30, math.Min(1, math.Abs(want))); e > worstTanh {
			worstTanh = e
		}
	}
	t.Logf("exp: worst relative error %.2g; tanh: %.2g", worstExp, worstTanh)
	// expf is Cephes' (below 2e-7); tanhRational is Eigen's rational approximation, documented
	// and measured below 4e-7 (a few ulps near ±1, where the float32 spacing is 6e-8).
	if worstExp > 2e-7 || worstTanh > 4e-7 {
		t.Fatalf("exp error %.2g, tanh error %.2g: want below 2e-7 and 4e-7", worstExp, worstTanh)
	}
	if expf(100) != float32(math.Inf(1)) || expf(-100) != 0 || !math.IsNaN(float64(expf(float32(math.NaN())))) {
		t.Fatal("expf's edge cases")
	}
	if math.Abs(float64(tanhRational(50))-1) > 1e-6 || math.Abs(float64(tanhRational(-50))+1) > 1e-6 || tanhRational(0) != 0 {
		t.Fatal("tanhRational's edge cases")
	}
	if !math.IsNaN(float64(tanhRational(float32(math.NaN())))) {
		t.Fatal("tanhRational(NaN) is not NaN: a diverging run would go unnoticed")
	}
}
