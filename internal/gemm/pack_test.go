package gemm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// TestPackedTransposedIsInPlace requires a product of a transposed A to be the same to the bit
// whether its panels are packed (the 6×16 kernel's packTransposed) or read in place: plain, with
// a bias, and triangular, across several depth blocks, edge panels and splits between workers.
// On one worker every shape here gives a task 8 column panels or more, so its panels are packed;
// the last shape does on 3 workers too. Packed panels are grouped as the default groupPanels
// groups them, one at a time, and 5 at a time (groups that end past m).
func TestPackedTransposedIsInPlace(t *testing.T) {
	for _, g := range []int{groupPanels, 1, 5} {
		t.Run(fmt.Sprint("group", g), func(t *testing.T) {
			defer func(g int) { groupPanels = g }(groupPanels)
			groupPanels = g
			testPackedTransposedIsInPlace(t)
		})
	}
}

func testPackedTransposedIsInPlace(t *testing.T) {
	if !Available() {
		t.Skip("no AVX2/FMA: Sgemm is gonum's")
	}
	defer func(k microKernel, f func(int, int, int, bool) (int, int)) { kern, split = k, f }(kern, split)
	inPlace, packed := avx2, avx2
	inPlace.packTransposed, packed.packTransposed = false, true
	rng := rand.New(rand.NewPCG(5, 6))
	for _, s := range [][3]int{{37, 300, 600}, {256, 200, 256}, {13, 129, 70}, {600, 144, 600}, {40, 600, 300}} {
		m, n, k := s[0], s[1], s[2]
		lda, ldb, ldc := m+3, n+1, n+2
		a, b, bias := randSlice(rng, k*lda), randSlice(rng, k*ldb), randSlice(rng, n)
		for _, workers := range []int{1, 3} {
			split = func(_, mp, np int, packA bool) (int, int) { return grid(workers, mp, np, packA) }
			products := map[string]func(c []float32){
				"Sgemm":     func(c []float32) { Sgemm(true, false, m, n, k, 0.5, a, lda, b, ldb, 1.5, c, ldc) },
				"SgemmBias": func(c []float32) { SgemmBias(true, false, m, n, k, a, lda, b, ldb, bias, c, ldc) },
			}
			if m == k {
				for name, tri := range map[string]Triangle{"LowerA": LowerA, "UpperA": UpperA} {
					products[name] = func(c []float32) { SgemmTri(tri, true, false, m, n, k, 1, a, lda, b, ldb, 0, c, ldc) }
				}
			}
			c0 := randSlice(rng, m*ldc)
			for name, product := range products {
				var out [2][]float32
				for i, kr := range []microKernel{inPlace, packed} {
					kern = kr
					out[i] = append([]float32(nil), c0...)
					product(out[i])
				}
				for i := range out[0] {
					if math.Float32bits(out[0][i]) != math.Float32bits(out[1][i]) {
						t.Fatalf("%s %dx%dx%d, %d workers: c[%d] = %g packed, %g in place", name, m, n, k, workers, i, out[1][i], out[0][i])
					}
				}
			}
		}
	}
}

// BenchmarkPackTransposed times config C's weight gradients (xᵀ·dy) with the 6×16 kernel, a
// transposed A packed and read in place, alternating the two call by call so that a busy
// machine slows both alike, and reports each one's median GFLOP/s.
func BenchmarkPackTransposed(b *testing.B) {
	if !Available() {
		b.Skip("no AVX2/FMA: Sgemm is gonum's")
	}
	defer func(k microKernel) { kern = k }(kern)
	inPlace, packed := avx2, avx2
	inPlace.packTransposed, packed.packTransposed = false, true
	rng := rand.New(rand.NewPCG(7, 8))
	for _, s := range []struct {
		name    string
		m, n, k int
	}{{"C-dWqkv", 256, 768, 2048}, {"C-dWup", 256, 1024, 2048}, {"C-dWdown", 1024, 256, 2048}} {
		a, bb, c := randSlice(rng, s.k*s.m), randSlice(rng, s.k*s.n), make([]float32, s.m*s.n)
		b.Run(s.name, func(b *testing.B) {
			var times [2][]float64
			for i := 0; i < b.N; i++ {
				for j, kr := range []microKernel{inPlace, packed} {
					kern = kr
					t0 := time.Now()
					Sgemm(true, false, s.m, s.n, s.k, 1, a, s.m, bb, s.n, 0, c, s.n)
					times[j] = append(times[j], time.Since(t0).Seconds())
				}
			}
			gflop := float64(2*s.m*s.n*s.k) / 1e9
			for j, name := range []string{"in-place", "packed"} {
				slices.Sort(times[j])
				b.ReportMetric(gflop/times[j][len(times[j])/2], name+"-GFLOP/s")
			}
		})
	}
}

// TestPackB checks packed panels of B against their definition, element by element: panel q
// holds op(b)[p0+p][j0+q·nr+j] at q·nr·kb + p·nr + j, and zeros for columns past j1, whatever
// the buffer held before. Shapes cover both kernels' nr, full and partial panels, a transposed
// B, and a block that starts past depth 0 and column 0.
func TestPackB(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, nr := range []int{16, 32} {
		for _, tb := range []bool{false, true} {
			for _, s := range []struct{ k, n, p0, kb, j0, j1 int }{
				{300, 70, 0, 256, 0, 70}, {300, 70, 256, 44, 5, 69}, {40, 96, 3, 37, 32, 96}, {9, 33, 0, 9, 1, 2},
			} {
				ldb := s.n + 3
				if tb {
					ldb = s.k + 1
				}
				b := randSlice(rng, max(s.k, s.n)*ldb)
				op := func(p, j int) float32 {
					if tb {
						return b[j*ldb+p]
					}
					return b[p*ldb+j]
				}
				panels := (s.j1 - s.j0 + nr - 1) / nr
				pb := make([]float32, panels*nr*s.kb)
				for i := range pb {
					pb[i] = float32(math.NaN())
				}
				packB(pb, nr, tb, b, ldb, s.p0, s.kb, s.j0, s.j1)
				for q := range panels {
					for p := range s.kb {
						for j := range nr {
							var want float32
							if col := s.j0 + q*nr + j; col < s.j1 {
								want = op(s.p0+p, col)
							}
							if got := pb[q*nr*s.kb+p*nr+j]; math.Float32bits(got) != math.Float32bits(want) {
								t.Fatalf("nr %d tb %v %+v: panel %d, depth %d, column %d: %g, want %g", nr, tb, s, q, p, j, got, want)
							}
						}
					}
				}
			}
		}
	}
}
