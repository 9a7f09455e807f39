// Package gemm is a single-precision matrix product in Go and Go assembly, without cgo: B is
// packed into panels of nr columns, A is read in place by rows of mr (or packed, where that is
// faster: see packTransposed), and a micro-kernel computes each mr×nr tile of C in registers:
// 12×32 with AVX-512, 6×16 with AVX2 and FMA. It is
// several times faster than gonum's pure-Go SGEMM on the small, skinny matrices of a small
// transformer. On CPUs with neither, and on other architectures, it hands the work to gonum.
package gemm

import (
	"sync"

	"gonum.org/v1/gonum/blas"
	gonum "gonum.org/v1/gonum/blas/gonum"

	"extrapolate/internal/par"
)

// kc is the depth of a block: a packed B block of kc×n stays in cache.
const kc = 256

// A microKernel computes one mr×nr tile: c = alpha·A·B + beta·c, with element (i, p) of A at
// a[i*rs+p*cs] and B a packed panel of nr columns.
type microKernel struct {
	mr, nr int
	run    func(k int, a *float32, rs, cs int, b, c *float32, ldc int, alpha, beta float32, bias *float32)
	// packTransposed says a transposed A is packed, not read in place, when its row panel
	// meets at least minReuse column panels. Read in place, each depth step of a transposed A
	// is a cache line of its own, of which the 6×16 kernel uses 24 bytes and the 12×32 one 48.
	// Measured call by call on a 2-core AMD EPYC (Zen 4), config C's weight gradients (xᵀ·dy:
	// 256×768, 256×1024 and 1024×256, depth 2048) ran 2–14% faster packed with the 6×16
	// kernel (BenchmarkPackTransposed), and 2–4% slower with the 12×32 one.
	packTransposed bool
}

var (
	avx512 = microKernel{12, 32, kernel12x32s, false}
	avx2   = microKernel{6, 16, kernel6x16s, true}
)

// minReuse is the least number of column panels over which a packed panel of A is reused.
const minReuse = 8

// kern is the kernel in use, the widest the CPU runs.
var kern = func() microKernel {
	if haveKernel && haveAVX512 {
		return avx512
	}
	return avx2
}()

// maxTile bounds mr·nr, for the edge tile on the stack.
const maxTile = 12 * 32

// Available reports whether the assembly kernel runs on this CPU.
func Available() bool { return haveKernel }

// Kernel names the micro-kernel in use, "avx512-12x32" or "avx2-6x16", or is "" when the
// products are gonum's: a figure measured with GODEBUG=cpu.avx512f=off says so in what it
// records.
func Kernel() string {
	if !haveKernel {
		return ""
	}
	if kern.mr == avx512.mr {
		return "avx512-12x32"
	}
	return "avx2-6x16"
}

// Sgemm computes c = alpha·op(a)·op(b) + beta·c for row-major matrices, op(x) being x or its
// transpose: op(a) is m×k, op(b) is k×n, c is m×n. With beta 0, c is not read.
func Sgemm(ta, tb bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	sgemm(Full, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, nil)
}

// A Triangle says which triangle of a square product matters, so that the product can skip the
// rest: attention's, whose probabilities are zero above the diagonal.
type Triangle int

const (
	// Full is the whole product.
	Full Triangle = iota
	// LowerC asks only for c[i][j] with j ≤ i: tiles wholly above the diagonal are not computed,
	// and c keeps what it held there.
	LowerC
	// LowerA says op(a)[i][p] is zero for p > i: row i's sum stops at its diagonal.
	LowerA
	// UpperA says op(a)[i][p] is zero for p < i: row i's sum starts at its diagonal.
	UpperA
)

// SgemmTri is Sgemm for a product with the structure tri: the same values to the bit as Sgemm
// where c is asked for (the terms skipped are exact zeros, given finite b), in about half the
// work when m, n and k are equal.
func SgemmTri(tri Triangle, ta, tb bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	if !haveKernel {
		tri = Full
	}
	if tri != Full && (m != n && tri == LowerC || m != k && tri != LowerC) {
		panic("gemm: a triangle of a product that is not square")
	}
	sgemm(tri, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, nil)
}

// SgemmBias computes c = op(a)·op(b) + bias, bias (n) added to every row, in one pass over c:
// the kernel adds the bias as it stores each tile. c is not read.
func SgemmBias(ta, tb bool, m, n, k int, a []float32, lda int, b []float32, ldb int, bias []float32, c []float32, ldc int) {
	if len(bias) < n {
		panic("gemm: bias is shorter than n")
	}
	if !haveKernel || k == 0 {
		for i := 0; i < m; i++ {
			copy(c[i*ldc:i*ldc+n], bias[:n])
		}
		sgemm(Full, ta, tb, m, n, k, 1, a, lda, b, ldb, 1, c, ldc, nil)
		return
	}
	sgemm(Full, ta, tb, m, n, k, 1, a, lda, b, ldb, 0, c, ldc, bias[:n])
}

func sgemm(tri Triangle, ta, tb bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int, bias []float32) {
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
	kr := kern
	mp, np := (m+kr.mr-1)/kr.mr, (n+kr.nr-1)/kr.nr
	wm, wn := 1, 1
	if m*n*k >= minSplit {
		wm, wn = split(par.Available(), mp, np, ta && kr.packTransposed)
	}
	asize := kc * kr.mr // a packed panel of A
	if kr.packTransposed {
		asize *= groupPanels
	}
	bufs := getBuffers(wm*wn, min(k, kc)*(np+wn-1)/wn*kr.nr, np*kr.nr, asize)
	defer putBuffers(bufs)
	var pbias []float32 // the bias padded to whole panels, added in the first depth block only
	if bias != nil {
		pbias = bufs.bias[:np*kr.nr]
		copy(pbias, bias)
		clear(pbias[n:])
	}
	// Worker (i, j) of the wm×wn grid computes row panels [m0, m1) and column panels [n0, n1)
	// over every depth block, packing its own columns of B: no worker waits for another.
	for i := 0; i < wm; i++ {
		for j := 0; j < wn; j++ {
			w := i*wn + j
			bufs.tasks[w] = task{kr: kr, tri: tri, ta: ta, tb: tb, a: a, lda: lda, b: b, ldb: ldb, k: k,
				m0: i * mp / wm, m1: (i + 1) * mp / wm, n0: j * np / wn, n1: (j + 1) * np / wn,
				m: m, n: n, alpha: alpha, beta: beta, pb: bufs.b[w], c: c, ldc: ldc, pa: bufs.a[w], edge: bufs.edge[w], bias: pbias}
		}
	}
	if wm*wn == 1 {
		bufs.tasks[0].run()
		return
	}
	bufs.ntasks = wm * wn
	par.Do(bufs.run)
}

// split is grid, or in tests a chosen split.
var split = grid

// minSplit is the least m·n·k that is split between workers: below it, a product takes a few
// microseconds and the split costs more than it saves.
const minSplit = 1 << 16

// grid chooses how to split mp row panels and np column panels between at most workers
// workers, as wm×wn: the split whose busiest worker has the least to do, counting its tiles
// and, as about one tile each, the column panels of B it packs and, where packA says a
// transposed A is packed for a worker with minReuse column panels or more, its row panels of A.
// Splitting columns is preferred on ties, since workers sharing columns each pack them.
//
// Counting A's panels moves config C's weight gradient 1024×256 (xᵀ·dy, depth 2048; 171×16
// panels with the 6×16 kernel) from columns, where each worker packs all 8 MB of x, to rows:
// 61–68 → 69–78 GFLOP/s on 2 cores of an Intel Xeon (Sapphire Rapids), call by call. Config B's
// 512×128 stays split by columns (4 column panels a worker: A is read in place).
func grid(workers, mp, np int, packA bool) (wm, wn int) {
	best := -1
	for j := min(workers, np); j >= 1; j-- {
		i := min(workers/j, mp)
		rows, cols := (mp+i-1)/i, (np+j-1)/j
		cost := rows*cols + cols
		if packA && cols >= minReuse {
			cost += rows
		}
		if best < 0 || cost < best {
			best, wm, wn = cost, i, j
		}
	}
	return wm, wn
}

// task is one worker's share of a product.
type task struct {
	kr                             microKernel
	tri                            Triangle
	ta, tb                         bool
	a, b, pb, c, pa, edge, bias    []float32
	lda, ldb, k, m0, m1, n0, n1, m int
	n, ldc                         int
	alpha, beta                    float32
}

// run computes the task's tiles, one depth block after another: for each, it packs its column
// panels of B and runs block.
func (t *task) run() {
	if t.m0 == t.m1 || t.n0 == t.n1 {
		return
	}
	nr := t.kr.nr
	j0, j1 := t.n0*nr, min(t.n1*nr, t.n)
	for p0 := 0; p0 < t.k; p0 += kc {
		kb := min(kc, t.k-p0)
		beta, bias := t.beta, t.bias
		if p0 > 0 {
			beta, bias = 1, nil
		}
		packB(t.pb, nr, t.tb, t.b, t.ldb, p0, kb, j0, j1)
		t.block(p0, kb, beta, bias)
	}
}

// block computes the tiles of row panels [m0, m1) and column panels [n0, n1) for depth block
// [p0, p0+kb), with the task's columns of B packed.
func (t *task) block(p0, kb int, beta float32, tbias []float32) {
	kr, ta, a, lda, m, n := t.kr, t.ta, t.a, t.lda, t.m, t.n
	alpha, pb, c, ldc, edge := t.alpha, t.pb, t.c, t.ldc, t.edge
	m0, m1, n0, n1 := t.m0, t.m1, t.n0, t.n1
	mr, nr := kr.mr, kr.nr
	// A full panel of A is read in place, with its strides; a partial one, and a transposed one
	// where the kernel asks (packTransposed), is packed, mr values per depth step, and read with
	// strides (1, mr). A transposed A is packed groupPanels panels at a time, reading each depth
	// step's values for all of them as one run of memory.
	rs, cs := lda, 1
	if ta {
		rs, cs = 1, lda
	}
	packT := ta && kr.packTransposed && n1-n0 >= minReuse
	g0, g1 := m0, m0 // the row panels packed in t.pa
	for ip := m0; ip < m1; ip++ {
		i0 := ip * mr
		rows := min(mr, m-i0)
		// The depth this row panel needs, [lo, lo+kd) within the block: all of it but for a
		// triangular A, whose skipped terms are zeros.
		lo, hi := 0, kb
		switch t.tri {
		case LowerA:
			hi = min(kb, i0+rows-p0)
		case UpperA:
			lo = min(max(i0-p0, 0), kb)
		}
		kd := hi - lo
		if kd <= 0 {
			if p0 > 0 {
				continue // nothing to add to what the earlier blocks stored
			}
			lo, kd = 0, 0 // the first block still stores beta·c and the bias
		}
		ap, ars, acs := &a[i0*rs+(p0+lo)*cs], rs, cs
		switch {
		case packT:
			if ip >= g1 {
				g0, g1 = ip, min(ip+groupPanels, m1)
				packAT(t.pa, mr, a, lda, m, g0*mr, g1-g0, p0, kb)
			}
			ap, ars, acs = &t.pa[(ip-g0)*kc*mr+lo*mr], 1, mr
		case rows < mr:
			packA(t.pa, mr, ta, a, lda, i0, rows, p0, kb)
			ap, ars, acs = &t.pa[lo*mr], 1, mr
		}
		for jp := n0; jp < n1; jp++ {
			j0 := jp * nr
			if t.tri == LowerC && j0 > i0+rows-1 {
				break // this tile and the rest of the row panel lie above the diagonal
			}
			cols := min(nr, n-j0)
			panel := &pb[(jp-n0)*nr*kb+lo*nr]
			var bias *float32
			if tbias != nil {
				bias = &tbias[j0]
			}
			if rows == mr && cols == nr {
				kr.run(kd, ap, ars, acs, panel, &c[i0*ldc+j0], ldc, alpha, beta, bias)
				continue
			}
			// An edge tile: compute into a full tile, then copy the part that exists.
			for r := 0; r < rows; r++ {
				copy(edge[r*nr:r*nr+cols], c[(i0+r)*ldc+j0:(i0+r)*ldc+j0+cols])
			}
			kr.run(kd, ap, ars, acs, panel, &edge[0], nr, alpha, beta, bias)
			for r := 0; r < rows; r++ {
				copy(c[(i0+r)*ldc+j0:(i0+r)*ldc+j0+cols], edge[r*nr:r*nr+cols])
			}
		}
	}
}

// groupPanels is the number of row panels of a transposed A packed at once (192 rows with the
// 6×16 kernel, 192 KB a depth block). Packed one panel at a time, each depth step is 24 bytes
// of a cache line of its own, and with a leading dimension of 4 KB (config C's 2048×1024
// activations) the block's 256 lines fall in a few cache sets, so that the next panel finds
// them evicted: config C's weight gradient xᵀ·dy of 1024×256×2048 ran at 33–41 GFLOP/s on one
// core of a 2-core AMD EPYC (Zen 3) packed one panel at a time and 44–50 packed 16 to 48 at a
// time (32–37% faster), the other two (256 rows) 1–10% faster; 4 at a time was slower than 1.
var groupPanels = 32

// packAT packs panels row panels of a transposed A, starting at row i0 of op(a) (of m rows),
// for depth [p0, p0+kb): panel q at pa[q*kc*mr:], mr values per depth step, rows past m zero.
func packAT(pa []float32, mr int, a []float32, lda, m, i0, panels, p0, kb int) {
	rows := min(panels*mr, m-i0)
	full := rows / mr // panels with all mr rows
	for p := range kb {
		src := a[(p0+p)*lda+i0 : (p0+p)*lda+i0+rows]
		q := 0
		if mr == 6 && full > 0 {
			_ = pa[(full-1)*kc*mr+p*6+5]
			copy6(&pa[p*6], kc*mr, &src[0], 6, full)
			q = full
		}
		for ; q < panels; q++ {
			dst := pa[q*kc*mr+p*mr : q*kc*mr+p*mr+mr]
			n := copy(dst, src[min(q*mr, rows):min(q*mr+mr, rows)])
			clear(dst[n:])
		}
	}
}

// packA copies rows [i0, i0+rows) and depth [p0, p0+kb) of op(a) into pa, mr values per depth
// step, padding missing rows with zeros: a partial panel of A (a transposed A's whole panels
// are packed by packAT, and so is a partial one, as a group of one panel ending at its rows).
func packA(pa []float32, mr int, ta bool, a []float32, lda, i0, rows, p0, kb int) {
	if ta {
		packAT(pa, mr, a, lda, i0+rows, i0, 1, p0, kb)
		return
	}
	pa = pa[:kb*mr]
	clear(pa)
	for r := 0; r < rows; r++ {
		row := a[(i0+r)*lda+p0 : (i0+r)*lda+p0+kb]
		for p, v := range row {
			pa[p*mr+r] = v
		}
	}
}

// packB copies depth [p0, p0+kb) of columns [j0, j1) of op(b) into panels of nr columns, each
// kb×nr, padding missing columns with zeros.
func packB(pb []float32, nr int, tb bool, b []float32, ldb, p0, kb, j0, j1 int) {
	if !tb {
		packBRows(pb, nr, b, ldb, p0, kb, j0, j1)
		return
	}
	for jp := 0; j0+jp*nr < j1; jp++ {
		c0 := j0 + jp*nr
		cols := min(nr, j1-c0)
		panel := pb[jp*nr*kb : (jp+1)*nr*kb]
		if cols < nr {
			clear(panel)
		}
		for j := 0; j < cols; j++ {
			col := b[(c0+j)*ldb+p0 : (c0+j)*ldb+p0+kb]
			for p, v := range col {
				panel[p*nr+j] = v
			}
		}
	}
}

// packBRows is packB for a B that is not transposed. It reads B a row at a time, each row's
// columns [j0, j1) one run of memory handed out to the panels, rather than a panel at a time,
// which reads nr values from each of kb rows ldb apart: a page of its own for each row once
// ldb is 1024 (config C's dy of 2048×1024), out of reach of the hardware's prefetch. Full
// panels' rows are copied by copy16, in assembly. Measured call by call with the AVX2
// kernel on a 2-core Intel Xeon (Sapphire Rapids), config C's weight gradients of qkv and fc1
// (dy 2048×768 and 2048×1024) ran 10–14% faster on two cores and 7–11% on one; products whose
// B is smaller changed by 0–2%. Config C's training loss is the same to the bit.
//
// Until 2026-12-03 a full panel's row was a Go array assignment, which the compiler makes a
// call to memmove, 64 bytes a call; with packAT's 24-byte ones, the calls were 22% of the time
// of config C's weight gradients on one core of a 2-core AMD EPYC (Zen 4), packing 28% in all.
// With copy16 and copy6, packing is 11%, and the weight gradients (256×768, 256×1024 and
// 1024×256, depth 2048) ran 73–84 → 88–95 GFLOP/s on one core and 140–160 → 184–198 on two
// (BenchmarkSgemm, the two builds alternating).
func packBRows(pb []float32, nr int, b []float32, ldb, p0, kb, j0, j1 int) {
	panels, full := (j1-j0+nr-1)/nr, (j1-j0)/nr
	if full < panels {
		clear(pb[full*nr*kb : panels*nr*kb])
	}
	for p := range kb {
		row := b[(p0+p)*ldb+j0 : (p0+p)*ldb+j1]
		q := 0
		if full > 0 && (nr == 16 || nr == 32) {
			_ = pb[(full-1)*nr*kb+p*nr+nr-1]
			for h := 0; h < nr; h += 16 {
				copy16(&pb[p*nr+h], nr*kb, &row[h], nr, full)
			}
			q = full
		}
		for ; q < panels; q++ {
			copy(pb[q*nr*kb+p*nr:q*nr*kb+p*nr+nr], row[q*nr:])
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
	a      [][]float32 // a packed A panel per worker
	edge   [][]float32 // an edge tile per worker
	b      [][]float32 // a worker's packed columns of a B block
	bias   []float32   // the bias, padded to whole panels
	tasks  []task
	ntasks int
	// run runs worker w's tasks, w, w+par.Workers(), ... below ntasks: one each unless a test
	// asks for more tasks than workers. Made once, so that a product allocates nothing.
	run func(w int)
}

// free holds buffers between calls. Unlike a sync.Pool it is not emptied by the garbage
// collector, so once its buffers have grown to the largest product they are never reallocated:
// there are at most as many as products running at once.
var free struct {
	sync.Mutex
	list []*buffers
}

// getBuffers returns buffers for workers workers, each packing up to asize values of A and
// bsize of B, and for a bias of ncols.
func getBuffers(workers, bsize, ncols, asize int) *buffers {
	free.Lock()
	var bufs *buffers
	if n := len(free.list); n > 0 {
		bufs, free.list = free.list[n-1], free.list[:n-1]
	}
	free.Unlock()
	if bufs == nil {
		bufs = &buffers{}
		bufs.run = func(w int) {
			for i := w; i < bufs.ntasks; i += par.Workers() {
				bufs.tasks[i].run()
			}
		}
	}
	for len(bufs.tasks) < max(workers, par.Workers()) {
		bufs.a, bufs.b = append(bufs.a, nil), append(bufs.b, nil)
		bufs.edge = append(bufs.edge, make([]float32, maxTile))
		bufs.tasks = append(bufs.tasks, task{})
	}
	for i := range workers {
		if cap(bufs.a[i]) < asize {
			bufs.a[i] = make([]float32, asize)
		}
		bufs.a[i] = bufs.a[i][:cap(bufs.a[i])]
		if cap(bufs.b[i]) < bsize {
			bufs.b[i] = make([]float32, bsize)
		}
		bufs.b[i] = bufs.b[i][:cap(bufs.b[i])]
	}
	// Tasks past the split are not run; clearing them drops the last call's matrices.
	for i := workers; i < len(bufs.tasks); i++ {
		bufs.tasks[i] = task{}
	}
	if cap(bufs.bias) < ncols {
		bufs.bias = make([]float32, ncols)
	}
	return bufs
}

func putBuffers(b *buffers) {
	free.Lock()
	free.list = append(free.list, b)
	free.Unlock()
}
