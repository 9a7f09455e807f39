//go:build openblas

package nn

// #cgo LDFLAGS: -lopenblas
import "C"

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/netlib/blas/netlib"
	G "gorgonia.org/gorgonia"
)

// With -tags openblas every matrix product goes to OpenBLAS (Debian's libopenblas-dev): the
// fused ops' float32 products, the float64 ones of the gradient checks, and gorgonia's own
// (the stock-op model).
func init() {
	impl := netlib.Implementation{}
	Sgemm = func(ta, tb bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
		impl.Sgemm(trans(ta), trans(tb), m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
	}
	blas64.Use(impl)
	G.Use(impl)
	BLAS = "openblas"
}

func trans(t bool) blas.Transpose {
	if t {
		return blas.Trans
	}
	return blas.NoTrans
}
