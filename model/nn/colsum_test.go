package nn

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestAddRowsIsScalar requires addRows to give the bits of the plain loop it replaces, column by
// column in row order, for widths on either side of the 64 columns the assembly takes at once,
// strides wider than a row, values of every size, infinities and NaN.
func TestAddRowsIsScalar(t *testing.T) {
	if !haveAVX2 {
		t.Log("no AVX2: addRows is the scalar loop itself")
	}
	rng := rand.New(rand.NewPCG(9, 10))
	for _, n := range []int{0, 1, 7, 63, 64, 65, 128, 200} {
		for _, rows := range []int{0, 1, 2, 17, 300} {
			ld := n + rng.IntN(5)
			src := make([]float32, rows*ld+n)
			for i := range src {
				src[i] = float32(rng.NormFloat64() * math.Pow(10, float64(rng.IntN(13)-6)))
			}
			dst := make([]float32, n)
			for i := range dst {
				dst[i] = float32(rng.NormFloat64())
			}
			if n > 2 && rows >= 2 {
				// Infinities meeting in column 0, and a NaN in column 2. Which NaN a sum of two
				// keeps is left to the compiler's choice of registers even in the scalar loop, so
				// a NaN need only stay a NaN.
				dst[0], src[0], src[ld] = float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.Inf(1))
				src[2] = float32(math.NaN())
			}
			want := append([]float32(nil), dst...)
			for r := 0; r < rows; r++ {
				for j := range want {
					want[j] += src[r*ld+j]
				}
			}
			addRows(dst, src, rows, ld)
			for j := range dst {
				nan := math.IsNaN(float64(dst[j])) && math.IsNaN(float64(want[j]))
				if math.Float32bits(dst[j]) != math.Float32bits(want[j]) && !nan {
					t.Fatalf("n %d, rows %d, ld %d: column %d is %g, the loop's %g", n, rows, ld, j, dst[j], want[j])
				}
			}
		}
	}
}
