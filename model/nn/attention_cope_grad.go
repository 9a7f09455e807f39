package nn

import (
	"math"

	asm "extrapolate/internal/gemm"
)

// copeBackward finishes the softmax's backward pass of one (sequence, head) task with CoPE: ds
// holds, for each row i, g_ij, the gradient of its scores after the scale and bias (the softmax's
// backward pass with no scale), and leaves the gradient of q_i·k_j, as softmaxBackward would
// without CoPE, plus the gates' part. s.z holds the task's position logits z; their gradient is
// summed into s.dz.
//
// The logit z_i(p) interpolated at p_ij gives dz_i[⌊p⌋] += g(1−w) and dz_i[⌈p⌉] += g·w, and
// dp_ij = g·(z_i[⌈p⌉] − z_i[⌊p⌋]): zero at an integer p, and where p is clamped, as PyTorch's
// autograd has it. p_ij sums the gates of keys j..i, so gate k gets Σ_{j≤k} dp_ij, a running
// sum from the first key, and its score that times σ'(s) = σ(1−σ), times the 1/√d that the
// gradient of q·k carries.
func (k *attention[F]) copeBackward(s *attnScratch[F], task, h int, ds, qscale []F, scale F) {
	t, npos := k.cfg.SeqLen, k.npos
	top := float64(npos - 1)
	for i := 0; i < t; i++ {
		lo := k.cfg.firstKey(i)
		g := k.gate[(task*t+i)*t+lo : (task*t+i)*t+i+1] // the forward pass's
		acc := 0.0
		for j := i; j >= lo; j-- {
			acc += float64(g[j-lo])
			s.pos[j] = acc
		}
		rowScale := scale
		if qscale != nil {
			rowScale = qscale[h*t+i] * scale
		}
		z, dz := s.z[i*npos:(i+1)*npos], s.dz[i*npos:(i+1)*npos]
		row := ds[i*t : i*t+i+1]
		var run float64
		for j := lo; j <= i; j++ {
			dl := float64(row[j])
			f, c, w := split(min(s.pos[j], top))
			dz[f] += F(dl * (1 - w))
			dz[c] += F(dl * w)
			if s.pos[j] <= top {
				run += dl * (float64(z[c]) - float64(z[f]))
			}
			sg := float64(g[j-lo])
			row[j] = row[j]*rowScale + F(run*sg*(1-sg))*scale
		}
	}
}

// clearCoPEGrad zeroes the worker's dz where a task's backward pass writes it, the positions
// each query's count reaches, m ≤ i+1: the rest is never written, and stays zero from setup.
func (k *attention[F]) clearCoPEGrad(s *attnScratch[F]) {
	np := k.npos
	for i := 0; i < k.cfg.SeqLen; i++ {
		clear(s.dz[i*np : i*np+min(i+2, np)])
	}
}

// copeGrad adds the position logits' part to the task's dq, (t, hd) and rotated, and keeps the
// embeddings' part for copeEmbeddingGrad: z = q·e/√d. Row i of dz is zero past column i+1,
// as copeLogitsTri computes z, so the products split as it does: column 0, the triangle of
// columns 1..n (dz lower triangular in dq = dz·eᵀ, its transpose upper triangular in
// deᵀ = dzᵀ·q), and the rows from n on whole. The task's part of de is kept transposed,
// (npos, hd); the columns past n of it stay zero.
func (k *attention[F]) copeGrad(s *attnScratch[F], task int, qt []F, hd int) {
	t, np := k.cfg.SeqLen, k.npos
	n := min(t, np-1)
	sc := F(1 / math.Sqrt(float64(hd)))
	dz, e, dq := s.dz, k.emb, s.dq
	deT := k.demb[task*hd*np : (task+1)*hd*np]
	gemm(false, true, t, hd, 1, sc, dz, np, e, np, 1, dq, hd)   // dq += dz·eᵀ/√d
	gemm(true, false, 1, hd, t, sc, dz, np, qt, hd, 0, deT, hd) // deᵀ = dzᵀ·q/√d
	if n > 0 {
		gemmTri(asm.LowerA, false, true, n, hd, n, sc, dz[1:], np, e[1:], np, 1, dq, hd)
		gemmTri(asm.UpperA, true, false, n, hd, n, sc, dz[1:], np, qt, hd, 0, deT[hd:], hd)
	}
	if t > n {
		gemm(false, true, t-n, hd, n, sc, dz[n*np+1:], np, e[1:], np, 1, dq[n*hd:], hd)
		gemm(true, false, n, hd, t-n, sc, dz[n*np+1:], np, qt[n*hd:], hd, 1, deT[hd:], hd)
	}
}

// copeEmbeddingGrad writes the embeddings' gradient into de, (layers, hd, npos): the tasks'
// parts, kept transposed, summed in task order, in float64, in the acting layer's slice, and
// zero elsewhere.
func (k *attention[F]) copeEmbeddingGrad(de []F) {
	size, np := len(k.emb), k.npos
	hd := size / np
	clear(de)
	dl := de[k.cfg.CoPELayer*size : (k.cfg.CoPELayer+1)*size]
	tasks := len(k.demb) / size
	parallel(size, tasks, func(_, lo, hi int) {
		for x := lo; x < hi; x++ {
			a, m := x/np, x%np
			var sum float64
			for task := 0; task < tasks; task++ {
				sum += float64(k.demb[task*size+m*hd+a])
			}
			dl[x] = F(sum)
		}
	})
}
