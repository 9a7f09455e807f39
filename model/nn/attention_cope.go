package nn

import (
	"math"

	"github.com/pkg/errors"
	"gorgonia.org/tensor"

	asm "extrapolate/internal/gemm"
)

// Contextual positions (CoPE, AttentionConfig.CoPE): query i gives each key j ≤ i it sees a
// gate g_ij = σ(s_ij), s_ij = q_i·k_j/√d its score before any query scale or bias, the key's
// position is p_ij = min(Σ_{k=j..i} g_ik, npos−1), and the score gains z_i(p_ij), with
// z_i(m) = q_i·e_m/√d and a fractional p interpolated between ⌊p⌋ and ⌈p⌉, as the reference's
// two gathers do. A row's positions are a running sum from the diagonal back, in float64, so
// the paths that cut a row into tiles of keys visit the tiles from the last (keyTiles) and carry
// the sum from one to the next (attnScratch.gsum): every path sums each row in the same order.
// z is computed for a block of queries at a time, npos values a query, so memory stays linear
// in the sequence however long it is.

// copeInput returns the index of the position embeddings' input, −1 without CoPE.
func (c AttentionConfig) copeInput() int { return c.index("position embeddings") }

// checkCoPE checks the embeddings' shape, (layers, headDim, npos), against the config.
func (c AttentionConfig) checkCoPE(e tensor.Shape, hd int) error {
	if len(e) != 3 || e[1] != hd || e[2] < 1 || c.CoPELayer < 0 || c.CoPELayer >= e[0] {
		return errors.Errorf("Attention: position embeddings of shape %v do not fit head dimension %d and layer %d", e, hd, c.CoPELayer)
	}
	return nil
}

// copeEmbeddings points k.emb at the acting layer's (hd, npos) matrix of the input; nothing
// without CoPE.
func (k *attention[F]) copeEmbeddings(in []*tensor.Dense) {
	ci := k.cfg.copeInput()
	if ci < 0 {
		return
	}
	sh := in[ci].Shape()
	n := sh[1] * sh[2]
	k.npos = sh[2]
	k.emb = Values[F](in[ci])[k.cfg.CoPELayer*n : (k.cfg.CoPELayer+1)*n]
}

// copeLogits fills s.z with z = q·e/√d for the rows queries from..from+rows−1 of q (rows of
// hd), row r holding query from+r's npos logits, of which those of positions past the block's
// last query + 1 are left out: no count reaches them. Nothing without CoPE.
func (k *attention[F]) copeLogits(s *attnScratch[F], q []F, from, rows, hd int) {
	if k.emb == nil {
		return
	}
	cols := min(k.npos, from+rows+1)
	gemm(false, false, rows, cols, hd, F(1/math.Sqrt(float64(hd))), q[from*hd:], hd, k.emb, k.npos, 0, s.z, k.npos)
	s.zFrom = from
}

// copeLogitsTri is copeLogits for every query of a training task, computing only the logits
// its counts reach: query i sums at most i+1 gates, so z_i(m) for m ≤ i+1 only. Column 0 is a
// product of its own; columns 1..n, n = min(t, npos−1), are a lower triangle for the queries
// below n, and every query from n on (when npos−1 < t) takes them all.
func (k *attention[F]) copeLogitsTri(s *attnScratch[F], q []F, t, hd int) {
	np, n := k.npos, min(t, k.npos-1)
	sc := F(1 / math.Sqrt(float64(hd)))
	gemm(false, false, t, 1, hd, sc, q, hd, k.emb, np, 0, s.z, np)
	if n > 0 {
		gemmTri(asm.LowerC, false, false, n, n, hd, sc, q, hd, k.emb[1:], np, 0, s.z[1:], np)
	}
	if t > n {
		gemm(false, false, t-n, n, hd, sc, q[n*hd:], hd, k.emb[1:], np, 0, s.z[n*np+1:], np)
	}
	s.zFrom = 0
}

// copeRow writes into s.cl the position logits of query i for keys j0, j0+1, …, from raw, their
// scores before the scale and bias, and into s.g their gates. A run of keys that ends at the query starts its count; one
// that ends before it continues the count the run after it left in s.gsum.
func (k *attention[F]) copeRow(raw []F, i, j0 int, s *attnScratch[F]) {
	r := i - s.zFrom
	z := s.z[r*k.npos : (r+1)*k.npos]
	var acc float64
	if j0+len(raw) <= i {
		acc = s.gsum[r]
	}
	top := float64(k.npos - 1)
	g, dst := s.g[:len(raw)], s.cl[:len(raw)]
	gates(g, raw)
	for j := len(raw) - 1; j >= 0; j-- {
		acc += float64(g[j])
		f, c, w := split(min(acc, top))
		dst[j] = F(float64(z[c])*w + float64(z[f])*(1-w))
	}
	s.gsum[r] = acc
}

// gates writes σ(x) of each score of raw into g: e^−x eight at a time (the softmax's expShiftRow),
// then 1/(1 + e^−x), which is 0 where e^−x overflows.
func gates[F float](g, raw []F) {
	for j, x := range raw {
		g[j] = -x
	}
	expShiftRow(g, 0)
	for j, e := range g {
		g[j] = 1 / (1 + e)
	}
}

// split returns ⌊p⌋, ⌈p⌉ and w = p − ⌊p⌋ for p ≥ 0, so that z at p interpolates as the
// reference's expression, z[⌈p⌉]·w + z[⌊p⌋]·(1−w), which at an integer p is z[p].
func split(p float64) (floor, ceil int, w float64) {
	floor = int(p)
	w = p - float64(floor)
	ceil = floor
	if w > 0 {
		ceil++
	}
	return floor, ceil, w
}

// keyTiles yields the starts of the tiles of size keys from first to end: in order, or from the
// last without a gap with CoPE, whose counts run from each query back.
func (k *attention[F]) keyTiles(first, end, size int) func(yield func(int) bool) {
	return func(yield func(int) bool) {
		if k.emb == nil {
			for j0 := first; j0 < end; j0 += size {
				if !yield(j0) {
					return
				}
			}
			return
		}
		for j0 := first + (end-1-first)/size*size; j0 >= first; j0 -= size {
			if !yield(j0) {
				return
			}
		}
	}
}

// setupCoPE sizes a worker's buffers for CoPE: in training, for every query of the sequence;
// in evaluation, for a block of queries and a tile of keys; nothing without CoPE.
func (k *attention[F]) setupCoPE(s *attnScratch[F], t int) {
	if k.emb == nil {
		return
	}
	rows, keys := t, t
	if !k.train {
		rows, keys = min(t, tileQueries), min(t, tileKeys)
	}
	s.z, s.gsum, s.cl = make([]F, rows*k.npos), make([]float64, rows), make([]F, keys)
	if k.train {
		s.dz, s.pos = make([]F, t*k.npos), make([]float64, t)
		return
	}
	s.g = make([]F, keys)
}
