package nn

import "math"

// Evaluation computes attention a block of tileQueries queries at a time against blocks of at
// most tileKeys keys, so that its memory grows linearly with the sequence, not as t².
//
// A block of queries whose keys fit in one tile is scored exactly as training scores it: the
// scores, a softmax over each row, then the probabilities times v. Every length of the
// committed comparisons (up to 2048) takes this path, so their numbers do not depend on the
// tiling. Longer rows are computed with the online softmax of flash attention (Dao et al.
// 2022, after Milakov & Gimelshein 2018): a running maximum and sum of exponentials per row,
// the output rescaled whenever the maximum grows, divided by the sum at the end. That changes
// the order of the rounding only.
const (
	tileQueries = 256
	tileKeys    = 2048
)

// EvalScratch is the number of values each worker of an evaluation attention holds for
// sequences of seqLen positions with heads of headDim dimensions: q, k, v and the output of one
// head, and one tile of scores. MaskedEvalScratch is its count with a window or a remap.
func EvalScratch(seqLen, headDim int) int {
	return 4*seqLen*headDim + tileQueries*min(seqLen, tileKeys)
}

// loadSequence puts sequence b's q, k and v of head h into the worker's s, q and k rotated at
// the sequence's position ids, and its forget gates' running sum into s.cum: what an evaluation
// pass over one (sequence, head) reads.
func (k *attention[F]) loadSequence(s *attnScratch[F], b, h int) {
	q, kk, v, d := k.in.q, k.in.k, k.in.v, k.in.d
	s.ids = k.cfg.idsOf(b)
	k.gather(s.q, q, b, h, d)
	k.rotate(s.q, k.cos, k.sin, s.ids, false)
	k.gather(s.k, kk, b, h, d)
	k.rotate(s.k, k.kcos, k.ksin, s.ids, false)
	k.gather(s.v, v, b, h, d)
	k.cumulate(s, b, h)
}

// forwardTiled is the evaluation forward pass, for any normaliser: a block of queries whose keys
// fit in one tile as training computes it, a longer one by the normaliser's online pass. Only
// a window that leaves keys out, or a remap, with a normaliser that masks, takes the masked path.
func (k *attention[F]) forwardTiled(o []F) {
	c := k.cfg
	d := k.in.d
	t, hd := c.SeqLen, d/c.Heads
	parallel(c.Batch*c.Heads, 4*t*t*hd, func(w, lo, hi int) {
		s := &k.scratch[w]
		for task := lo; task < hi; task++ {
			b, h := task/c.Heads, task%c.Heads
			k.loadSequence(s, b, h)
			for i0 := 0; i0 < t; i0 += tileQueries {
				i1 := min(i0+tileQueries, t)
				k.copeLogits(s, s.q, i0, i1-i0, hd)
				if i1 <= tileKeys {
					k.queriesOneTile(s, task, h, i0, i1)
				} else {
					k.norm.online(s, task, h, i0, i1)
				}
			}
			scatter(o, s.o, b, h, t, d, hd)
		}
	})
}

// queriesOneTile computes the output of queries i0..i1−1, whose keys 0..i1−1 fit in one tile.
func (k *attention[F]) queriesOneTile(s *attnScratch[F], task, h, i0, i1 int) {
	hd := len(s.q) / k.cfg.SeqLen
	nk := i1
	p := s.s[:(i1-i0)*nk]
	gemm(false, true, i1-i0, nk, hd, F(1/math.Sqrt(float64(hd))), s.q[i0*hd:], hd, s.k, hd, 0, p, nk)
	k.norm.rows(p, nk, task, h, i0, i1, s, false)
	gemm(false, false, i1-i0, hd, nk, 1, p, nk, s.v, hd, 0, s.o[i0*hd:], hd)
}

// An onlineNorm is a normaliser whose rows evaluation can fold in a tile of keys at a time
// (queriesOnline): each row keeps running sums against its running maximum, and earlier terms
// shrink by one factor when the maximum grows. The softmax and softpick are; stick-breaking,
// which walks each row back from the query and stops where its stick is spent, has a pass of
// its own (queriesStick).
type onlineNorm[F float] interface {
	// reset starts row r of a block of queries in head h.
	reset(s *attnScratch[F], r, h int)
	// fold folds the first valid scores of row r, whose diagonal is at index diag, into its
	// sums, replacing them by their weights before the row's normalisation, against its new
	// maximum, and zeroing the rest of the row; it returns the factor by which the row's
	// earlier terms shrink.
	fold(s *attnScratch[F], r int, row []F, valid, diag int) float64
	// finish returns what row r's output is multiplied by at the end, and its entropy and
	// mass on far keys.
	finish(s *attnScratch[F], r int) (scale, entropy, farMass float64)
}

// queriesOnline computes the output of queries i0..i1−1 over their keys a tile at a time, for a
// normaliser that folds tiles in (onlineNorm): the online softmax of flash attention, or its
// like. The tiles come in the order keyTiles gives: the sums take any.
func (k *attention[F]) queriesOnline(s *attnScratch[F], task, h, i0, i1 int, n onlineNorm[F]) {
	t := k.cfg.SeqLen
	hd := len(s.q) / t
	rows := i1 - i0
	out := s.o[i0*hd : i1*hd]
	clear(out)
	for r := 0; r < rows; r++ {
		n.reset(s, r, h)
		s.first[r] = 0
	}
	for j0 := range k.keyTiles(0, i1, tileKeys) {
		j1 := min(j0+tileKeys, i1)
		nk := j1 - j0
		p := s.s[:rows*nk]
		gemm(false, true, rows, nk, hd, F(1/math.Sqrt(float64(hd))), s.q[i0*hd:], hd, s.k[j0*hd:], hd, 0, p, nk)
		for i := i0; i < i1; i++ {
			r := i - i0
			row := p[r*nk : (r+1)*nk]
			valid := max(0, min(nk, i+1-j0)) // keys j0..i of this tile
			if valid > 0 {
				k.adjust(row[:valid], h, i, j0, s)
			}
			// The output so far was weighted against the old maximum.
			if corr := n.fold(s, r, row, valid, i-j0); corr != 1 {
				for x := range out[r*hd : (r+1)*hd] {
					out[r*hd+x] *= F(corr)
				}
				s.first[r] *= corr
			}
			if j0 == 0 {
				s.first[r] = float64(row[0])
			}
		}
		gemm(false, false, rows, hd, nk, 1, p, nk, s.v[j0*hd:], hd, 1, out, hd)
	}
	st := k.cfg.Stats
	for r := 0; r < rows; r++ {
		scale, ent, far := n.finish(s, r)
		inv := F(scale)
		for x := range out[r*hd : (r+1)*hd] {
			out[r*hd+x] *= inv
		}
		if st != nil {
			x := task*t + i0 + r
			st.ent[x], st.far[x], st.first[x] = ent, far, s.first[r]*scale
		}
	}
}

// The softmax's online rows: s.max, s.sum, s.ent and s.far are each row's running maximum, sum
// of exponentials, sum of exponentials times the score less the maximum (for the entropy) and
// sum over far keys.

func (n softmax[F]) reset(s *attnScratch[F], r, _ int) {
	s.max[r], s.sum[r], s.ent[r], s.far[r] = math.Inf(-1), 0, 0, 0
}
func (n softmax[F]) fold(s *attnScratch[F], r int, row []F, valid, diag int) float64 {
	return s.update(r, row, valid, diag, n.k.cfg.Stats)
}
func (n softmax[F]) finish(s *attnScratch[F], r int) (scale, entropy, farMass float64) {
	return 1 / s.sum[r], math.Log(s.sum[r]) - s.ent[r]/s.sum[r], s.far[r] / s.sum[r]
}

// update folds the first valid scores of row r into its running maximum and sums, replacing
// them by their exponentials against the new maximum and zeroing the rest of the row (the
// future keys). diag is the diagonal's index in row, so that key j is diag−j positions back.
// It returns the factor by which the row's earlier exponentials shrink.
func (s *attnScratch[F]) update(r int, row []F, valid, diag int, st *AttentionStats) float64 {
	clear(row[valid:])
	if valid == 0 {
		return 1
	}
	m := s.max[r]
	for _, x := range row[:valid] {
		m = max(m, float64(x))
	}
	corr := 1.0
	if s.sum[r] > 0 {
		corr = math.Exp(s.max[r] - m)
		// ent sums e·(x − max); against the new maximum each term loses e·(m − old max).
		s.ent[r] = corr * (s.ent[r] - (m-s.max[r])*s.sum[r])
		s.sum[r] *= corr
		s.far[r] *= corr
	}
	s.max[r] = m
	var sum, ent, far float64
	for j, x := range row[:valid] {
		e := exp(x - F(m))
		row[j] = e
		sum += float64(e)
		ent += float64(e) * (float64(x) - m)
		if st != nil && diag-j >= st.Far {
			far += float64(e)
		}
	}
	s.sum[r] += sum
	s.ent[r] += ent
	s.far[r] += far
	return corr
}
