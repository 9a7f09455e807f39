package nn

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestLog1pf checks log1pf against math.Log1p over e in [0, 1], small e included, where a logf
// of the rounded 1+e would be wrong: within 4 float32 ulps of the result, relative; and its
// 1/(1+e) within 2.
func TestLog1pf(t *testing.T) {
	const ulp = 0x1p-23
	var worstL, worstInv float64
	check := func(e float32) {
		l, inv := log1pf(e)
		want := math.Log1p(float64(e))
		if want > 0 {
			worstL = max(worstL, math.Abs(float64(l)-want)/want)
		} else if l != 0 {
			t.Errorf("log1pf(%g) = %g, want 0", e, l)
		}
		worstInv = max(worstInv, math.Abs(float64(inv)-1/(1+float64(e)))*(1+float64(e)))
	}
	for i := 0; i <= 1<<16; i++ {
		check(float32(i) / (1 << 16))
	}
	for e := float32(1e-30); e < 1e-3; e *= 1.01 {
		check(e)
	}
	if worstL > 4*ulp || worstInv > 2*ulp {
		t.Fatalf("worst relative errors: log(1+e) %.3g, 1/(1+e) %.3g; want at most %.3g and %.3g", worstL, worstInv, 4*ulp, 2*ulp)
	}
	t.Logf("worst relative errors: log(1+e) %.3g (%.2g ulps), 1/(1+e) %.3g", worstL, worstL/ulp, worstInv)
}

// TestLogSigmoids checks log σ(x), log(1−σ(x)) and σ(x) against their definitions in float64,
// at scores where the naive log(1/(1+e^−x)) loses everything, in both precisions (float32 where
// e^−|x| is a normal float32).
func TestLogSigmoids(t *testing.T) {
	for _, x := range []float64{-100, -30, -5, -1e-3, 0, 1e-6, 0.5, 3, 20, 90} {
		e := math.Exp(-math.Abs(x))
		ls, lr, s := logSigmoids(x, e)
		wantLS, wantLR := -math.Log1p(math.Exp(-x)), -math.Log1p(math.Exp(x))
		if x > 0 {
			wantLR = -x - math.Log1p(math.Exp(-x))
		} else {
			wantLS = x - math.Log1p(math.Exp(x))
		}
		wantS := 1 / (1 + math.Exp(-x))
		rel := func(a, b float64) float64 { return math.Abs(a-b) / math.Max(math.Abs(b), 1e-300) }
		if rel(ls, wantLS) > 1e-15 || rel(lr, wantLR) > 1e-15 || rel(s, wantS) > 1e-15 {
			t.Errorf("float64 at %g: %g %g %g, want %g %g %g", x, ls, lr, s, wantLS, wantLR, wantS)
		}
		if e < 0x1p-126 {
			continue // not a normal float32: the float32 kernels' expf gives 0 there
		}
		ls32, lr32, s32 := logSigmoids(float32(x), float32(e))
		if rel(float64(ls32), wantLS) > 1e-6 || rel(float64(lr32), wantLR) > 1e-6 || rel(float64(s32), wantS) > 1e-6 {
			t.Errorf("float32 at %g: %g %g %g, want %g %g %g", x, ls32, lr32, s32, wantLS, wantLR, wantS)
		}
	}
}

// TestLog1pRowMatchesLog1pf checks the vector log1p against log1pf to the bit, on every length
// from 0 to 40 (the tail after the multiples of 8 included) and on the edges of [0, 1]: 0, the
// smallest subnormal, values near 1 and 1 itself.
func TestLog1pRowMatchesLog1pf(t *testing.T) {
	if !haveAVX2 {
		t.Skip("no AVX2: log1pRow takes log1pf itself")
	}
	rng := rand.New(rand.NewPCG(3, 4))
	edges := []float32{0, math.SmallestNonzeroFloat32, 1e-30, 6e-8, 0.5, math.Nextafter32(1, 0), 1}
	for n := 0; n <= 40; n++ {
		e := make([]float32, n)
		for i := range e {
			if i < len(edges) && n%2 == 1 {
				e[i] = edges[i]
			} else {
				e[i] = float32(math.Exp(-20 * rng.Float64()))
			}
		}
		l, inv := make([]float32, n), make([]float32, n)
		if !log1pRow(e, l, inv) {
			t.Fatal("log1pRow did not take a float32 row")
		}
		for i, x := range e {
			wl, winv := log1pf(x)
			if math.Float32bits(l[i]) != math.Float32bits(wl) || math.Float32bits(inv[i]) != math.Float32bits(winv) {
				t.Fatalf("n %d, e %g: log1pRow %g, %g; log1pf %g, %g", n, x, l[i], inv[i], wl, winv)
			}
		}
	}
}
