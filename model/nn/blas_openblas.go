//go:build openblas

package nn

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/netlib/blas/netlib"
	G "gorgonia.org/gorgonia"

	asm "extrapolate/internal/gemm"
	"extrapolate/internal/openblas"
	"extrapolate/internal/par"
)

// With -tags openblas every matrix product goes to OpenBLAS (Debian's libopenblas-dev): the
// fused ops' float32 products, the float64 ones of the gradient checks, and gorgonia's own
// (the stock-op model).
//
// OpenBLAS runs each call on one thread, and large products are split in two halves run on two
// workers of package par: the ops already run small products (attention's, per head) on both
// CPUs at once, and OpenBLAS's own threads on top of them fought over the two cores, spinning
// in sched_yield (a third of the time in the profile).
func init() {
	openblas.SetThreads(1)
	impl := netlib.Implementation{}
	one := func(ta, tb bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
		impl.Sgemm(trans(ta), trans(tb), m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
	}
	// Large products are always cut in the same two halves, run on two workers when there are
	// two: OpenBLAS's rounding depends on a call's shape, so cutting by the number of cores
	// would make results depend on it.
	Sgemm = func(ta, tb bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
		if m*n*k < 1<<18 || max(m, n) < 2 {
			one(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
			return
		}
		half := func(i int) {
			if m >= n {
				h := m / 2
				if i == 0 {
					one(ta, tb, h, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
					return
				}
				a2 := a[h*lda:] // rows h.. of op(a)
				if ta {
					a2 = a[h:]
				}
				one(ta, tb, m-h, n, k, alpha, a2, lda, b, ldb, beta, c[h*ldc:], ldc)
				return
			}
			h := n / 2
			if i == 0 {
				one(ta, tb, m, h, k, alpha, a, lda, b, ldb, beta, c, ldc)
				return
			}
			b2 := b[h:] // columns h.. of op(b)
			if tb {
				b2 = b[h*ldb:]
			}
			one(ta, tb, m, n-h, k, alpha, a, lda, b2, ldb, beta, c[h:], ldc)
		}
		par.For(2, 1<<30, func(_, lo, hi int) {
			for i := lo; i < hi; i++ {
				half(i)
			}
		})
	}
	blas64.Use(impl)
	G.Use(impl)
	SgemmBias = func(ta, tb bool, m, n, k int, a []float32, lda int, b []float32, ldb int, bias []float32, c []float32, ldc int) {
		for i := 0; i < m; i++ {
			copy(c[i*ldc:i*ldc+n], bias[:n])
		}
		Sgemm(ta, tb, m, n, k, 1, a, lda, b, ldb, 1, c, ldc)
	}
	// OpenBLAS computes the whole product: the triangle asked for has the same values.
	SgemmTri = func(_ asm.Triangle, ta, tb bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
		Sgemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
	}
	BLAS = "openblas"
}

func trans(t bool) blas.Transpose {
	if t {
		return blas.Trans
	}
	return blas.NoTrans
}
