package gemm

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// TestCopiedRowsAreInPlace requires a product of a row-major A to be the same to the bit whether
// its full panels are copied (the kernel's copyRows) or read in place, with either kernel: plain,
// with a bias, with a transposed B, and triangular, across several depth blocks, edge panels,
// leading dimensions past the row, and splits between workers (on 3 workers, tasks of one
// column panel, which read A in place either way, stand beside tasks that copy).
func TestCopiedRowsAreInPlace(t *testing.T) {
	kernels(t, func(t *testing.T) {
		defer func(k microKernel, f func(int, int, int, bool) (int, int)) { kern, split = k, f }(kern, split)
		inPlace, copied := kern, kern
		inPlace.copyRows, copied.copyRows = false, true
		rng := rand.New(rand.NewPCG(11, 12))
		for _, s := range [][3]int{{37, 300, 600}, {256, 200, 256}, {13, 129, 70}, {300, 300, 300}, {40, 40, 1030}} {
			m, n, k := s[0], s[1], s[2]
			lda, ldc := k+5, n+2
			a, b, bias := randSlice(rng, m*lda), randSlice(rng, k*(n+k+1)), randSlice(rng, n)
			for _, workers := range []int{1, 3} {
				split = func(_, mp, np int, packA bool) (int, int) { return grid(workers, mp, np, packA) }
				products := map[string]func(c []float32){
					"Sgemm":     func(c []float32) { Sgemm(false, false, m, n, k, 0.5, a, lda, b, n+1, 1.5, c, ldc) },
					"SgemmBias": func(c []float32) { SgemmBias(false, false, m, n, k, a, lda, b, n+1, bias, c, ldc) },
					"tb":        func(c []float32) { Sgemm(false, true, m, n, k, 1, a, lda, b, k+1, 0, c, ldc) },
				}
				if m == n && n == k {
					for name, tri := range map[string]Triangle{"LowerC": LowerC, "LowerA": LowerA, "UpperA": UpperA} {
						products[name] = func(c []float32) { SgemmTri(tri, false, true, m, n, k, 1, a, lda, b, k+1, 0, c, ldc) }
					}
				}
				c0 := randSlice(rng, m*ldc)
				for name, product := range products {
					var out [2][]float32
					for i, kr := range []microKernel{inPlace, copied} {
						kern = kr
						out[i] = append([]float32(nil), c0...)
						product(out[i])
					}
					for i := range out[0] {
						if math.Float32bits(out[0][i]) != math.Float32bits(out[1][i]) {
							t.Fatalf("%s %dx%dx%d, %d workers: c[%d] = %g copied, %g in place", name, m, n, k, workers, i, out[1][i], out[0][i])
						}
					}
				}
			}
		}
	})
}

// BenchmarkCopyRows times the products of configs A, B and C whose A is row-major with each
// kernel, its panels copied (copyRows) and read in place, alternating the two call by call so
// that a busy machine slows both alike, and reports each one's median GFLOP/s.
func BenchmarkCopyRows(b *testing.B) {
	if !Available() {
		b.Skip("no AVX2/FMA: Sgemm is gonum's")
	}
	defer func(k microKernel) { kern = k }(kern)
	rng := rand.New(rand.NewPCG(7, 8))
	for _, kr := range []microKernel{avx2, avx512} {
		if kr.mr == avx512.mr && !haveAVX512 {
			continue
		}
		inPlace, copied := kr, kr
		inPlace.copyRows, copied.copyRows = false, true
		for _, s := range shapes {
			if s.ta {
				continue
			}
			lda, ldb := s.k, s.n
			if s.tb {
				ldb = s.k
			}
			a, bb, c := randSlice(rng, s.m*s.k), randSlice(rng, s.k*s.n), make([]float32, s.m*s.n)
			b.Run(s.name+"/"+map[int]string{6: "avx2", 12: "avx512"}[kr.mr], func(b *testing.B) {
				var times [2][]float64
				for i := 0; i < b.N; i++ {
					for j, kr := range []microKernel{inPlace, copied} {
						kern = kr
						t0 := time.Now()
						Sgemm(false, s.tb, s.m, s.n, s.k, 1, a, lda, bb, ldb, 0, c, s.n)
						times[j] = append(times[j], time.Since(t0).Seconds())
					}
				}
				gflop := float64(2*s.m*s.n*s.k) / 1e9
				for j, name := range []string{"in-place", "copied"} {
					slices.Sort(times[j])
					b.ReportMetric(gflop/times[j][len(times[j])/2], name+"-GFLOP/s")
				}
			})
		}
	}
}
