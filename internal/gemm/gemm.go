// Package gemm is a single-precision matrix product in Go and Go assembly, without cgo: B is
// packed into panels of 16 columns and A into panels of 6 rows, and an AVX2/FMA micro-kernel
// computes each 6×16 tile of C in registers. It is several times faster than gonum's pure-Go
// SGEMM on the small, skinny matrices of a small transformer. On CPUs without AVX2 and FMA, and
// on other architectures, it hands the work to gonum.
package gemm

import (
	"runtime"
	"sync"

	"gonum.org/v1/gonum/blas"
	gonum "gonum.org/v1/gonum/blas/gonum"
)

const (
	mr = 6   // rows of a tile
	nr = 16  // columns of a tile
	kc = 256 // depth of a block: a packed B block of kc×n stays in cache
)

// numWorkers bounds the goroutines of one product: one per CPU at start. Each result element
// is computed by one goroutine in a fixed order, so the split does not change any value.
var numWorkers = max(1, runtime.GOMAXPROCS(0))

// Available reports whether the assembly kernel runs on this CPU.
func Available() bool { return haveKernel }

// Sgemm computes c = alpha·op(a)·op(b) + beta·c for row-major matrices, op(x) being x or its
// transpose: op(a) is m×k, op(b) is k×n, c is m×n. With beta 0, c is not read.
func Sgemm(ta, tb bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	if m == 0 || n == 0 {
		return
	}
	if !haveKernel {
		tA, tB := blas.NoTrans, blas.NoTrans
		if ta {
			tA = blas.Trans
		}
		if tb {
			tB = blas.Trans
		}
		gonum.Implementation{}.Sgemm(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	checkBounds(ta, tb, m, n, k, a, lda, b, ldb, c, ldc)
	if k == 0 || alpha == 0 {
		scale(m, n, beta, c, ldc)
		return
	}
	mp, np := (m+mr-1)/mr, (n+nr-1)/nr
	workers := 1
	if flops := m * n * k; flops >= 1<<18 {
		workers = min(numWorkers, max(mp, np))
	}
	bufs := getBuffers(min(k, kc), np*nr)
	defer putBuffers(bufs)
	for p0 := 0; p0 < k; p0 += kc {
		kb := min(kc, k-p0)
		bt := beta
		if p0 > 0 {
			bt = 1
		}
		packB(bufs.b, tb, b, ldb, p0, kb, n)
		if workers == 1 {
			block(ta, a, lda, p0, kb, 0, mp, 0, np, m, n, alpha, bt, bufs.b, c, ldc, bufs.a[0])
			continue
		}
		// Split the larger dimension's panels between the workers.
		var wg sync.WaitGroup
		for w := 0; w < workers; w++ {
			m0, m1, n0, n1 := 0, mp, 0, np
			if mp >= np {
				m0, m1 = w*mp/workers, (w+1)*mp/workers
			} else {
				n0, n1 = w*np/workers, (w+1)*np/workers
			}
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				block(ta, a, lda, p0, kb, m0, m1, n0, n1, m, n, alpha, bt, bufs.b, c, ldc, bufs.a[w])
			}(w)
		}
		wg.Wait()
	}
}

// block computes the tiles of row panels [m0, m1) and column panels [n0, n1) for depth block
// [p0, p0+kb), with B already packed.
func block(ta bool, a []float32, lda, p0, kb, m0, m1, n0, n1, m, n int, alpha, beta float32, pb []float32, c []float32, ldc int, pa []float32) {
	var edge [mr * nr]float32
	// A full panel of A is read in place, with its strides; only a partial one is packed.
	rs, cs := lda, 1
	if ta {
		rs, cs = 1, lda
	}
	for ip := m0; ip < m1; ip++ {
		i0 := ip * mr
		rows := min(mr, m-i0)
		ap := &pa[0]
		if rows == mr {
			ap = &a[i0*rs+p0*cs]
		} else {
			packA(pa, ta, a, lda, i0, rows, p0, kb)
		}
		for jp := n0; jp < n1; jp++ {
			j0 := jp * nr
			cols := min(nr, n-j0)
			panel := pb[jp*nr*kb:]
			if rows == mr && cols == nr {
				if ap == &pa[0] {
					kernel6x16(kb, ap, &panel[0], &c[i0*ldc+j0], ldc, alpha, beta)
				} else {
					kernel6x16s(kb, ap, rs, cs, &panel[0], &c[i0*ldc+j0], ldc, alpha, beta)
				}
				continue
			}
			// An edge tile: compute into a full tile, then copy the part that exists.
			for r := 0; r < rows; r++ {
				copy(edge[r*nr:r*nr+cols], c[(i0+r)*ldc+j0:(i0+r)*ldc+j0+cols])
			}
			if rows == mr {
				kernel6x16s(kb, ap, rs, cs, &panel[0], &edge[0], nr, alpha, beta)
			} else {
				kernel6x16(kb, &pa[0], &panel[0], &edge[0], nr, alpha, beta)
			}
			for r := 0; r < rows; r++ {
				copy(c[(i0+r)*ldc+j0:(i0+r)*ldc+j0+cols], edge[r*nr:r*nr+cols])
			}
		}
	}
}

// packA copies rows [i0, i0+rows) and depth [p0, p0+kb) of op(a) into pa, six values per depth
// step, padding missing rows with zeros.
func packA(pa []float32, ta bool, a []float32, lda, i0, rows, p0, kb int) {
	pa = pa[:kb*mr]
	if rows < mr {
		clear(pa)
	}
	if !ta {
		if rows == mr {
			// Six row streams in, one contiguous stream out.
			r0 := a[(i0+0)*lda+p0 : (i0+0)*lda+p0+kb]
			r1 := a[(i0+1)*lda+p0 : (i0+1)*lda+p0+kb]
			r2 := a[(i0+2)*lda+p0 : (i0+2)*lda+p0+kb]
			r3 := a[(i0+3)*lda+p0 : (i0+3)*lda+p0+kb]
			r4 := a[(i0+4)*lda+p0 : (i0+4)*lda+p0+kb]
			r5 := a[(i0+5)*lda+p0 : (i0+5)*lda+p0+kb]
			for p := range r0 {
				d := pa[p*mr : p*mr+mr : p*mr+mr]
				d[0], d[1], d[2], d[3], d[4], d[5] = r0[p], r1[p], r2[p], r3[p], r4[p], r5[p]
			}
			return
		}
		for r := 0; r < rows; r++ {
			row := a[(i0+r)*lda+p0 : (i0+r)*lda+p0+kb]
			for p, v := range row {
				pa[p*mr+r] = v
			}
		}
		return
	}
	for p := 0; p < kb; p++ {
		copy(pa[p*mr:p*mr+rows], a[(p0+p)*lda+i0:(p0+p)*lda+i0+rows])
	}
}

// packB copies depth [p0, p0+kb) of op(b), all n columns, into panels of 16 columns, each
// kb×16, padding missing columns with zeros.
func packB(pb []float32, tb bool, b []float32, ldb, p0, kb, n int) {
	np := (n + nr - 1) / nr
	for jp := 0; jp < np; jp++ {
		j0 := jp * nr
		cols := min(nr, n-j0)
		panel := pb[jp*nr*kb : (jp+1)*nr*kb]
		if cols < nr {
			clear(panel)
		}
		if !tb {
			for p := 0; p < kb; p++ {
				copy(panel[p*nr:p*nr+cols], b[(p0+p)*ldb+j0:(p0+p)*ldb+j0+cols])
			}
			continue
		}
		for j := 0; j < cols; j++ {
			col := b[(j0+j)*ldb+p0 : (j0+j)*ldb+p0+kb]
			for p, v := range col {
				panel[p*nr+j] = v
			}
		}
	}
}

func scale(m, n int, beta float32, c []float32, ldc int) {
	for i := 0; i < m; i++ {
		row := c[i*ldc : i*ldc+n]
		if beta == 0 {
			clear(row)
			continue
		}
		for j := range row {
			row[j] *= beta
		}
	}
}

// checkBounds panics, as BLAS does, when a matrix is smaller than its shape says: the kernel
// reads memory through raw pointers, so the check must come first.
func checkBounds(ta, tb bool, m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	ar, ac := m, k
	if ta {
		ar, ac = k, m
	}
	br, bc := k, n
	if tb {
		br, bc = n, k
	}
	need := func(rows, cols, ld, have int, name string) {
		if rows == 0 || cols == 0 {
			return
		}
		if ld < cols || (rows-1)*ld+cols > have {
			panic("gemm: " + name + " is too short for its shape")
		}
	}
	need(ar, ac, lda, len(a), "a")
	need(br, bc, ldb, len(b), "b")
	need(m, n, ldc, len(c), "c")
}

type buffers struct {
	a [][]float32 // a packed A panel per worker
	b []float32   // the packed B block
}

var pool sync.Pool

func getBuffers(kb, ncols int) *buffers {
	bufs, _ := pool.Get().(*buffers)
	if bufs == nil {
		bufs = &buffers{}
	}
	for len(bufs.a) < numWorkers {
		bufs.a = append(bufs.a, nil)
	}
	for i := range bufs.a {
		if cap(bufs.a[i]) < kb*mr {
			bufs.a[i] = make([]float32, kc*mr)
		}
		bufs.a[i] = bufs.a[i][:cap(bufs.a[i])]
	}
	if cap(bufs.b) < kb*ncols {
		bufs.b = make([]float32, kb*ncols)
	}
	bufs.b = bufs.b[:cap(bufs.b)]
	return bufs
}

func putBuffers(b *buffers) { pool.Put(b) }
