package nn

import (
	"unsafe"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"

	asm "extrapolate/internal/gemm"
	"extrapolate/internal/par"
)

// Sgemm is the float32 matrix product the ops use: package gemm's assembly kernel by default,
// OpenBLAS with -tags openblas.
var Sgemm = asm.Sgemm

// SgemmTri is Sgemm for a product of which only a triangle matters (asm.Triangle): attention's.
var SgemmTri = asm.SgemmTri

// SgemmBias is c = op(a)·op(b) + bias, the bias added to every row as the product is stored.
var SgemmBias = asm.SgemmBias

// BLAS names the matrix product in use: "go-asm" (package gemm's AVX2 kernel), "gonum" (on
// CPUs without AVX2 and FMA) or "openblas".
var BLAS = blasName()

func blasName() string {
	if asm.Available() {
		return "go-asm"
	}
	return "gonum"
}

// gemm computes c = alpha*op(a)*op(b) + beta*c on row-major matrices, where op(x) is x or its
// transpose: float32 through Sgemm, float64 (gradient checks) through gonum's BLAS.
func gemm[F float](ta, tb bool, m, n, k int, alpha F, a []F, lda int, b []F, ldb int, beta F, c []F, ldc int) {
	if m == 0 || n == 0 {
		return
	}
	if unsafe.Sizeof(alpha) == 4 {
		Sgemm(ta, tb, m, n, k, float32(alpha), as32(a), lda, as32(b), ldb, float32(beta), as32(c), ldc)
		return
	}
	tA, tB := blas.NoTrans, blas.NoTrans
	if ta {
		tA = blas.Trans
	}
	if tb {
		tB = blas.Trans
	}
	blas64.Implementation().Dgemm(tA, tB, m, n, k, float64(alpha), as64(a), lda, as64(b), ldb, float64(beta), as64(c), ldc)
}

// gemmTri is gemm for a square product of which only the triangle tri matters: the same
// values to the bit where asked for, in about half the work for float32. The float64 products
// of the gradient checks are whole.
func gemmTri[F float](tri asm.Triangle, ta, tb bool, m, n, k int, alpha F, a []F, lda int, b []F, ldb int, beta F, c []F, ldc int) {
	if unsafe.Sizeof(alpha) == 4 && m > 0 && n > 0 {
		SgemmTri(tri, ta, tb, m, n, k, float32(alpha), as32(a), lda, as32(b), ldb, float32(beta), as32(c), ldc)
		return
	}
	gemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// gemmBias computes c = a·w + bias (rows of a times w, plus bias on every row), in one pass
// over c for float32.
func gemmBias[F float](m, n, k int, a, w, bias, c []F) {
	if unsafe.Sizeof(bias[0]) == 4 {
		SgemmBias(false, false, m, n, k, as32(a), k, as32(w), n, as32(bias), as32(c), n)
		return
	}
	for r := 0; r < m; r++ {
		copy(c[r*n:(r+1)*n], bias)
	}
	gemm(false, false, m, n, k, 1, a, k, w, n, 1, c, n)
}

func as32[F float](x []F) []float32 {
	return unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(x))), len(x))
}

func as64[F float](x []F) []float64 {
	return unsafe.Slice((*float64)(unsafe.Pointer(unsafe.SliceData(x))), len(x))
}

// workers is how many parts parallel splits work into at most: package par's workers, one per
// CPU at start, so scratch space sized by it stays valid.
func workers() int { return par.Workers() }

// parallel runs fn over [0, n) split into one contiguous range per worker, when the work is
// worth it: cost is a rough count of the operations per element. fn gets its part's index,
// below workers(), to pick its scratch space.
func parallel(n, cost int, fn func(w, lo, hi int)) { par.For(n, cost, fn) }
