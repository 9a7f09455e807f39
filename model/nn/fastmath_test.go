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

// TestExpShiftIsExpf requires the vector exponential to give expf's values to the bit: on
// every float32 exponent's range, at the thresholds where expf's branches switch, at ±Inf and
// NaN, and with lengths that leave a scalar tail.
func TestExpShiftIsExpf(t *testing.T) {
	if !haveAVX2 {
		t.Skip("no AVX2: expShift is expf")
	}
	var xs []float32
	for x := -100.0; x <= 100.0; x += 0.000917 {
		xs = append(xs, float32(x))
	}
	for _, x := range []float32{88.37626, 88.37627, 88.376259, -87.33654, -87.33655, -87.336539, 0, float32(math.Copysign(0, -1)), 1e-30, -1e-30} {
		xs = append(xs, x, math.Nextafter32(x, 200), math.Nextafter32(x, -200))
	}
	nan := float32(math.NaN())
	xs = append(xs, float32(math.Inf(1)), float32(math.Inf(-1)), nan, -nan)
	for _, shift := range []float32{0, 3.25, -7.5} {
		for _, tail := range []int{0, 1, 7} {
			got := append([]float32(nil), xs[:len(xs)-tail]...)
			expShift(got, shift)
			for i, x := range xs[:len(xs)-tail] {
				want := expf(x - shift)
				if math.Float32bits(got[i]) != math.Float32bits(want) {
					t.Fatalf("shift %g: expShift(%g) = %g (%#x), expf %g (%#x)", shift, x, got[i], math.Float32bits(got[i]), want, math.Float32bits(want))
				}
			}
		}
	}
}
