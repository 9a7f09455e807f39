package gemm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
	gonum "gonum.org/v1/gonum/blas/gonum"
)

// naive is the definition, in float64.
func naive(ta, tb bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) []float64 {
	out := make([]float64, len(c))
	for i := range c {
		out[i] = float64(c[i])
	}
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			var s float64
			for p := 0; p < k; p++ {
				var av, bv float32
				if ta {
					av = a[p*lda+i]
				} else {
					av = a[i*lda+p]
				}
				if tb {
					bv = b[j*ldb+p]
				} else {
					bv = b[p*ldb+j]
				}
				s += float64(av) * float64(bv)
			}
			prev := float64(c[i*ldc+j])
			if beta == 0 {
				prev = 0
			}
			out[i*ldc+j] = float64(alpha)*s + float64(beta)*prev
		}
	}
	return out
}

func randSlice(rng *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	return x
}

// kernels runs f with each micro-kernel this CPU has, then restores the default.
func kernels(t *testing.T, f func(t *testing.T)) {
	if !Available() {
		t.Skip("no AVX2/FMA: Sgemm is gonum's")
	}
	defer func(k microKernel) { kern = k }(kern)
	list := map[string]microKernel{"avx2": avx2}
	if haveAVX512 {
		list["avx512"] = avx512
	}
	for name, k := range list {
		kern = k
		t.Run(name, f)
	}
}

func TestSgemm(t *testing.T) { kernels(t, testSgemm) }

func testSgemm(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	sizes := [][3]int{{1, 1, 1}, {6, 16, 1}, {6, 16, 7}, {7, 17, 5}, {12, 32, 3}, {25, 65, 9}, {5, 3, 0}, {13, 33, 64}, {64, 64, 64},
		{100, 40, 300}, {300, 600, 70}, {1024, 64, 64}, {64, 256, 1024}, {2, 700, 3}, {513, 9, 257}}
	for _, s := range sizes {
		m, n, k := s[0], s[1], s[2]
		for _, ta := range []bool{false, true} {
			for _, tb := range []bool{false, true} {
				for _, ab := range [][2]float32{{1, 0}, {1, 1}, {0.5, -2}, {0, 3}} {
					alpha, beta := ab[0], ab[1]
					// Leading dimensions larger than the rows, to test strides.
					lda, ldb, ldc := k+3, n+2, n+5
					ar, br := m, k
					if ta {
						lda, ar = m+1, k
					}
					if tb {
						ldb, br = k+4, n
					}
					a, b := randSlice(rng, ar*lda), randSlice(rng, br*ldb)
					c := randSlice(rng, m*ldc)
					if beta == 0 {
						for i := range c {
							c[i] = float32(math.NaN()) // must not be read
						}
					}
					want := naive(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
					Sgemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
					for i := 0; i < m; i++ {
						for j := 0; j < ldc; j++ {
							got, w := float64(c[i*ldc+j]), want[i*ldc+j]
							if j >= n {
								if math.Float64bits(got) != math.Float64bits(w) && !(math.IsNaN(got) && math.IsNaN(w)) {
									t.Fatalf("%v ta=%v tb=%v: wrote past column n at (%d,%d)", s, ta, tb, i, j)
								}
								continue
							}
							if math.Abs(got-w) > 1e-4*math.Max(1, math.Sqrt(float64(k)))*math.Max(1, math.Abs(w)) {
								t.Fatalf("%v ta=%v tb=%v alpha=%v beta=%v: c[%d,%d] = %g, want %g", s, ta, tb, alpha, beta, i, j, got, w)
							}
						}
					}
				}
			}
		}
	}
}

// TestSplitsAgree computes products split every way, between more workers than the machine
// may have: each must equal the product in one piece to the last bit, so that results do not
// depend on the number of cores.
func TestSplitsAgree(t *testing.T) { kernels(t, testSplitsAgree) }

func testSplitsAgree(t *testing.T) {
	defer func() { split = grid }()
	rng := rand.New(rand.NewPCG(5, 6))
	for _, s := range [][3]int{{13, 33, 64}, {100, 40, 300}, {300, 600, 70}, {64, 256, 600}, {513, 97, 257}} {
		m, n, k := s[0], s[1], s[2]
		mp, np := (m+kern.mr-1)/kern.mr, (n+kern.nr-1)/kern.nr
		for _, ta := range []bool{false, true} {
			for _, bias := range []bool{false, true} {
				lda := k
				if ta {
					lda = m
				}
				a, b, bv := randSlice(rng, m*k), randSlice(rng, k*n), randSlice(rng, n)
				c0 := randSlice(rng, m*n)
				product := func(wm, wn int) []float32 {
					split = func(int, int, int, bool) (int, int) { return wm, wn }
					c := append([]float32(nil), c0...)
					if bias {
						SgemmBias(ta, false, m, n, k, a, lda, b, n, bv, c, n)
					} else {
						Sgemm(ta, false, m, n, k, 0.5, a, lda, b, n, 1, c, n)
					}
					return c
				}
				want := product(1, 1)
				for wm := 1; wm <= min(4, mp); wm++ {
					for wn := 1; wn <= min(4, np); wn++ {
						got := product(wm, wn)
						for i := range got {
							if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
								t.Fatalf("%v ta=%v bias=%v split %d×%d: c[%d] = %g, in one piece %g", s, ta, bias, wm, wn, i, got[i], want[i])
							}
						}
					}
				}
			}
		}
	}
}

// TestGrid checks that the chosen split uses at most the workers and panels there are, and
// that no other split would leave its busiest worker less to do, counting the panels of B it
// packs and, where A is packed, those of A.
func TestGrid(t *testing.T) {
	cost := func(wm, wn, mp, np int, packA bool) int {
		rows, cols := (mp+wm-1)/wm, (np+wn-1)/wn
		c := rows*cols + cols
		if packA && cols >= minReuse {
			c += rows
		}
		return c
	}
	for _, packA := range []bool{false, true} {
		for workers := 1; workers <= 16; workers++ {
			for mp := 1; mp <= 40; mp++ {
				for np := 1; np <= 40; np++ {
					wm, wn := grid(workers, mp, np, packA)
					if wm < 1 || wn < 1 || wm*wn > workers || wm > mp || wn > np {
						t.Fatalf("grid(%d, %d, %d, %v) = %d×%d", workers, mp, np, packA, wm, wn)
					}
					for i := 1; i <= mp; i++ {
						for j := 1; i*j <= workers && j <= np; j++ {
							if cost(i, j, mp, np, packA) < cost(wm, wn, mp, np, packA) {
								t.Fatalf("grid(%d, %d, %d, %v) = %d×%d, but %d×%d leaves less to the busiest worker", workers, mp, np, packA, wm, wn, i, j)
							}
						}
					}
				}
			}
		}
	}
	for _, c := range []struct {
		what         string
		mp, np       int
		packA        bool
		wantM, wantN int
	}{
		{"a weight gradient of config B (11×12 panels)", 11, 12, false, 1, 2},
		{"config B's 512×128 weight gradient, 86×8 panels (A read in place once split)", 86, 8, true, 1, 2},
		{"config C's 1024×256 weight gradient, 171×16 panels with A packed", 171, 16, true, 2, 1},
		{"config C's 256×1024 weight gradient, 43×64 panels with A packed", 43, 64, true, 1, 2},
	} {
		if wm, wn := grid(2, c.mp, c.np, c.packA); wm != c.wantM || wn != c.wantN {
			t.Errorf("%s on 2 workers: %d×%d, want %d×%d", c.what, wm, wn, c.wantM, c.wantN)
		}
	}
}

func TestShortSlicePanics(t *testing.T) {
	if !Available() {
		t.Skip("no AVX2/FMA")
	}
	defer func() {
		if recover() == nil {
			t.Fatal("a too-short matrix did not panic")
		}
	}()
	Sgemm(false, false, 4, 4, 4, 1, make([]float32, 15), 4, make([]float32, 16), 4, 0, make([]float32, 16), 4)
}

// The shapes of config A, B and C's products: activations times weights, the weight gradients
// (transposed activations times output gradients), and attention's per-head products.
var shapes = []struct {
	name    string
	ta, tb  bool
	m, n, k int
}{
	{"A-qkv", false, false, 1024, 64, 64},
	{"A-mlp-up", false, false, 1024, 256, 64},
	{"A-mlp-down", false, false, 1024, 64, 256},
	{"A-dW", true, false, 64, 256, 1024},
	{"A-dX", false, true, 1024, 64, 256},
	{"A-scores", false, true, 64, 64, 16},
	{"B-mlp-up", false, false, 2048, 512, 128},
	{"B-dW", true, false, 128, 512, 2048},
	{"B-scores", false, true, 128, 128, 32},
	{"B-qkv", false, false, 2048, 384, 128},
	{"B-dWqkv", true, false, 128, 384, 2048},
	{"B-dXqkv", false, true, 2048, 128, 384},
	{"B-dWproj", true, false, 128, 128, 2048},
	{"B-dWdown", true, false, 512, 128, 2048},
	{"B-dXup", false, true, 2048, 128, 512},
	{"B-dXdown", false, true, 2048, 512, 128},
	{"B-head", false, false, 2048, 96, 128},
	{"B-dWhead", true, false, 128, 96, 2048},
	{"B-dXhead", false, true, 2048, 128, 96},
	{"C-qkv", false, false, 2048, 768, 256},
	{"C-mlp-up", false, false, 2048, 1024, 256},
	{"C-mlp-down", false, false, 2048, 256, 1024},
	{"C-dWqkv", true, false, 256, 768, 2048},
	{"C-dWup", true, false, 256, 1024, 2048},
	{"C-dWdown", true, false, 1024, 256, 2048},
	{"C-dXqkv", false, true, 2048, 256, 768},
	{"C-dXup", false, true, 2048, 256, 1024},
	{"C-dXdown", false, true, 2048, 1024, 256},
	// A large square product: the kernel's practical peak on this machine.
	{"square-1024", false, false, 1024, 1024, 1024},
}

func BenchmarkSgemm(b *testing.B) {
	defer func(k microKernel) { kern = k }(kern)
	for _, s := range shapes {
		for _, impl := range []string{"avx512", "avx2", "gonum"} {
			if impl == "avx512" && !haveAVX512 {
				continue
			}
			b.Run(fmt.Sprintf("%s/%s", s.name, impl), func(b *testing.B) {
				rng := rand.New(rand.NewPCG(1, 1))
				lda, ldb := s.k, s.n
				if s.ta {
					lda = s.m
				}
				if s.tb {
					ldb = s.k
				}
				a, bb, c := randSlice(rng, s.m*s.k), randSlice(rng, s.k*s.n), make([]float32, s.m*s.n)
				tA, tB := blas.NoTrans, blas.NoTrans
				if s.ta {
					tA = blas.Trans
				}
				if s.tb {
					tB = blas.Trans
				}
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if impl != "gonum" {
						kern = map[string]microKernel{"avx2": avx2, "avx512": avx512}[impl]
						Sgemm(s.ta, s.tb, s.m, s.n, s.k, 1, a, lda, bb, ldb, 0, c, s.n)
					} else {
						gonum.Implementation{}.Sgemm(tA, tB, s.m, s.n, s.k, 1, a, lda, bb, ldb, 0, c, s.n)
					}
				}
				b.ReportMetric(2*float64(s.m*s.n*s.k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}

func TestSgemmBias(t *testing.T) { kernels(t, testSgemmBias) }

func testSgemmBias(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, s := range [][3]int{{1, 1, 1}, {12, 32, 5}, {13, 33, 300}, {100, 70, 64}, {7, 5, 0}} {
		m, n, k := s[0], s[1], s[2]
		for _, ta := range []bool{false, true} {
			lda, ar := k, m
			if ta {
				lda, ar = m, k
			}
			a, b, bias := randSlice(rng, ar*lda+1), randSlice(rng, k*n+1), randSlice(rng, n)
			c := make([]float32, m*n)
			for i := range c {
				c[i] = float32(math.NaN()) // must not be read
			}
			want := naive(ta, false, m, n, k, 1, a, lda, b, n, 0, make([]float32, m*n), n)
			SgemmBias(ta, false, m, n, k, a, lda, b, n, bias, c, n)
			for i := 0; i < m; i++ {
				for j := 0; j < n; j++ {
					w := want[i*n+j] + float64(bias[j])
					if got := float64(c[i*n+j]); math.Abs(got-w) > 1e-4*math.Max(1, math.Sqrt(float64(k)))*math.Max(1, math.Abs(w)) {
						t.Fatalf("%v ta=%v: c[%d,%d] = %g, want %g", s, ta, i, j, got, w)
					}
				}
			}
		}
	}
}
