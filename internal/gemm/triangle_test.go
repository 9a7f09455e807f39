package gemm

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestSgemmTri requires a triangular product to equal the full one to the bit where it is
// asked for: with op(a) zero outside its triangle (attention's probabilities), for every
// transposition, beta, size (edge panels, several depth blocks) and split between workers;
// and LowerC to leave c untouched in tiles wholly above the diagonal.
func TestSgemmTri(t *testing.T) { kernels(t, testSgemmTri) }

func testSgemmTri(t *testing.T) {
	defer func(f func(int, int, int, bool) (int, int)) { split = f }(split)
	rng := rand.New(rand.NewPCG(3, 4))
	for _, sz := range [][2]int{{1, 5}, {6, 16}, {7, 3}, {37, 33}, {128, 32}, {300, 17}, {600, 40}} {
		for _, tri := range []Triangle{LowerC, LowerA, UpperA} {
			for _, workers := range []int{1, 3} {
				split = func(_, mp, np int, packA bool) (int, int) { return grid(workers, mp, np, packA) }
				for _, ta := range []bool{false, true} {
					for _, tb := range []bool{false, true} {
						for _, beta := range []float32{0, 1.5} {
							checkTri(t, rng, tri, sz[0], sz[1], ta, tb, beta)
						}
					}
				}
			}
		}
	}
}

func checkTri(t *testing.T, rng *rand.Rand, tri Triangle, sq, other int, ta, tb bool, beta float32) {
	// LowerC's product is sq×sq of depth other; the others' is sq×other of depth sq.
	m, n, k := sq, other, sq
	if tri == LowerC {
		n, k = sq, other
	}
	lda, ldb, ldc := k+1, n+2, n+3
	if ta {
		lda = m + 1
	}
	if tb {
		ldb = k + 4
	}
	a, b := randSlice(rng, max(m, k)*lda), randSlice(rng, max(k, n)*ldb)
	at := func(i, p int) *float32 {
		if ta {
			return &a[p*lda+i]
		}
		return &a[i*lda+p]
	}
	for i := 0; i < m; i++ {
		for p := 0; p < k; p++ {
			if tri == LowerA && p > i || tri == UpperA && p < i {
				*at(i, p) = 0
			}
		}
	}
	c := randSlice(rng, m*ldc)
	want := append([]float32(nil), c...)
	Sgemm(ta, tb, m, n, k, 0.75, a, lda, b, ldb, beta, want, ldc)
	got := append([]float32(nil), c...)
	SgemmTri(tri, ta, tb, m, n, k, 0.75, a, lda, b, ldb, beta, got, ldc)
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			g, w := got[i*ldc+j], want[i*ldc+j]
			if tri == LowerC && j > i {
				// Above the diagonal: computed or left as it was, and left as it was in tiles
				// wholly above it, whose first column is past the last row of their row panel.
				last := min(i/kern.mr*kern.mr+kern.mr, m) - 1
				if j/kern.nr*kern.nr > last && g != c[i*ldc+j] {
					t.Fatalf("LowerC %dx%dx%d: c[%d,%d] was written", m, n, k, i, j)
				}
				continue
			}
			if math.Float32bits(g) != math.Float32bits(w) {
				t.Fatalf("tri %d %dx%dx%d ta=%v tb=%v beta=%v: c[%d,%d] = %g, the full product %g", tri, m, n, k, ta, tb, beta, i, j, g, w)
			}
		}
	}
}
