package nn

import (
	"math"

	"github.com/pkg/errors"
)

// Stick-breaking attention (AttentionConfig.StickBreaking; Tan et al., ICLR 2025) replaces the
// softmax: with β_ij = σ(z_ij) of the scores, query i gives key j
//
//	A_ij = β_ij·Π_{j<k<i}(1−β_ik),  log A_ij = log σ(z_ij) + Σ_{j<k<i} log(1−σ(z_ik)),
//
// the product over j < k ≤ i with AttendCurrent, which also lets j = i. Each row is walked from
// its nearest key back, carrying the log of what is left of the stick, S = Σ log(1−β) of the keys
// passed, in float64: a sum that runs to thousands at long lengths, whose float32 rounding would
// reach the nearest keys' weights. log σ(z) and log(1−σ(z)) need one exponential and one log1p of
// e^−|z| a score (logsigmoid.go), and A one more exponential.
//
// The backward pass is O(n) a row too. With g_ij = A_ij·dA_ij the gradient of log A_ij, z_ij
// reaches log A_ij through log σ, with derivative 1−β_ij, and log A_ij' of every farther key
// j' < j through log(1−β_ij), with derivative −β_ij, so
//
//	dz_ij = g_ij·(1−β_ij) − β_ij·Σ_{j'<j} g_ij',
//
// a running sum from the row's farthest key: no O(n³) term. Training keeps each β for it.
//
// Evaluation needs no online rescaling, as the softmax does: each weight is final once the keys
// nearer to the query are passed. A block of queries whose keys fit in one tile is computed as
// training computes it; longer ones take tiles of keys from the block's last query back to its
// first key, each row's S carried from tile to tile, and the products with v summed as the tiles
// come. Once every row of the block has S below stickDead, every farther weight is exp(≤ −800),
// 0 in float64 and so in F exactly, and the block stops: long rows cost what their stick reaches.

// stickDead is the log of what is left of a stick below which every further weight rounds to 0
// in float64 (e^−745 is the smallest positive value).
const stickDead = -800

// refuses names what stick-breaking does not take: a remap, which would leave keys out of the
// product or move them, and forget gates or contextual positions (no scheme gives both in one
// layer).
func (stick[F]) refuses(c AttentionConfig) error {
	switch {
	case c.Remap != nil:
		return errors.New("Attention: stick-breaking attention takes no remap: its weights break the stick over every key at its true place")
	case c.LogForget:
		return errors.New("Attention: stick-breaking attention takes no forget gates: their gradient counts on the softmax, which a shift of a row leaves as it is")
	case c.CoPE:
		return errors.New("Attention: stick-breaking attention takes no contextual positions: they count the softmax's gates, and no scheme gives both in one layer")
	}
	return nil
}

// lastKey is the last key query i attends to: itself, or with stick-breaking and without
// AttendCurrent the one before it (−1 for the first query, which attends to nothing).
func (c AttentionConfig) lastKey(i int) int {
	if c.StickBreaking && !c.AttendCurrent {
		return i - 1
	}
	return i
}

// stickRow replaces row, one query's scores for a run of its keys, by their stick-breaking
// weights, and returns surv, Σ log(1−β) of the nearer keys already passed, with the row's keys
// added; sig, when not nil, gets each key's β. Its passes over the row: e^−|z| of each score,
// eight at a time in float32 (expShiftRow); log(1+e^−|z|) and 1/(1+e^−|z|), eight at a time in
// float32 too (log1pRow); log σ and log(1−β) of each, which are independent (into row and
// rest); the stick, a running sum from the nearest key back, in float64; and the weights'
// exponentials, eight at a time again. scratch holds at least 3·len(row).
func stickRow[F float](row, sig, scratch []F, surv float64) float64 {
	n := len(row)
	rest, l, inv := scratch[:n], scratch[n:2*n], scratch[2*n:3*n]
	for j, x := range row {
		rest[j] = -max(x, -x)
	}
	expShiftRow(rest, 0) // e^−|z|
	if !log1pRow(rest, l, inv) || !stickLogs32(row, sig, rest, l, inv) {
		for j, x := range row {
			ls, lr, b := logSigmoids(x, rest[j])
			row[j], rest[j] = ls, lr
			if sig != nil {
				sig[j] = b
			}
		}
	}
	for j := len(row) - 1; j >= 0; j-- {
		row[j] = F(float64(row[j]) + surv)
		surv += float64(rest[j])
	}
	expShiftRow(row, 0)
	return surv
}

// rest returns the worker's scratch for stickRow on a row of n keys: their e^−|z|, then
// log(1−β), and log(1+e^−|z|) and 1/(1+e^−|z|).
func (s *attnScratch[F]) rest(n int) []F {
	if len(s.sp) < 3*n {
		s.sp = make([]F, 3*n)
	}
	return s.sp[:3*n]
}

// stickRows is softmaxRows for stick-breaking: queries i0..i1−1 of a task, rows ld apart in p
// from query i0's, each with its keys 0..i1−1 in one tile, get their weights; every other entry
// of a row is 0. sig, in training, gets the β of the kept scores, laid out as p.
func (k *attention[F]) stickRows(p []F, ld, task, h, i0, i1 int, s *attnScratch[F], sig []F, keepRaw bool) {
	t, st := k.cfg.SeqLen, k.cfg.Stats
	for i := i0; i < i1; i++ {
		lo, last := k.cfg.firstKey(i), k.cfg.lastKey(i)
		row := p[(i-i0)*ld : (i-i0)*ld+ld]
		var sr []F
		if sig != nil {
			sr = sig[(i-i0)*ld : (i-i0)*ld+ld]
			clear(sr)
		}
		if lo <= last {
			if keepRaw {
				copy(k.raw[(task*t+i)*t+lo:], row[lo:last+1])
			}
			k.adjust(row[lo:last+1], h, i, lo, s)
			var srow []F
			if sr != nil {
				srow = sr[lo : last+1]
			}
			stickRow(row[lo:last+1], srow, s.rest(last+1-lo), 0)
		}
		clear(row[:lo])
		clear(row[max(lo, last+1):])
		if st != nil {
			setRow(st, task*t+i, row[:i+1])
		}
	}
}

// stickBackward is softmaxBackward for stick-breaking: one task's dA = do·vᵀ in ds becomes the
// scores' gradient, row by row, with the same bookkeeping (a learned bias's gradient in pt, the
// query scale's sums).
func (k *attention[F]) stickBackward(task, h int, pt, ds, sig, qscale []F, scale F) {
	t := k.cfg.SeqLen
	for i := 0; i < t; i++ {
		lo, last := k.cfg.firstKey(i), k.cfg.lastKey(i)
		pr, dr, sr := pt[i*t:(i+1)*t], ds[i*t:(i+1)*t], sig[i*t:(i+1)*t]
		rowScale := scale
		if qscale != nil {
			rowScale = qscale[h*t+i] * scale
		}
		var before, sg float64 // Σ g over the farther keys; Σ dz·raw for the query scale
		for j := lo; j <= last; j++ {
			a, b := float64(pr[j]), float64(sr[j])
			gj := a * float64(dr[j])
			g := F(gj*(1-b) - b*before)
			before += gj
			if k.cfg.LearnBias {
				pr[j] = g
			}
			if k.raw != nil {
				sg += float64(g) * float64(k.raw[(task*t+i)*t+j])
			}
			dr[j] = g * rowScale
		}
		if k.raw != nil {
			k.scaleGrad[task*t+i] = sg
		}
		clear(dr[:lo])
		clear(dr[max(lo, last+1):])
	}
}

// queriesStick computes the output of queries i0..i1−1 over tiles of keys from the block's last
// query back, s.sum holding each row's Σ log(1−β) so far, s.ent and s.far its statistics.
func (k *attention[F]) queriesStick(s *attnScratch[F], task, h, i0, i1 int) {
	c := k.cfg
	t := c.SeqLen
	hd := len(s.q) / t
	rows := i1 - i0
	out := s.o[i0*hd : i1*hd]
	for r := 0; r < rows; r++ {
		s.sum[r], s.ent[r], s.far[r], s.first[r] = 0, 0, 0, 0
	}
	first := c.firstKey(i0) // the block's farthest key
	for j1 := i1; j1 > first; j1 -= tileKeys {
		j0 := max(j1-tileKeys, first)
		nk := j1 - j0
		p := s.s[:rows*nk]
		gemm(false, true, rows, nk, hd, F(1/math.Sqrt(float64(hd))), s.q[i0*hd:], hd, s.k[j0*hd:], hd, 0, p, nk)
		alive := false
		for r := 0; r < rows; r++ {
			alive = k.stickTile(s, p[r*nk:(r+1)*nk], task, h, i0+r, r, j0) || alive
		}
		beta := F(1)
		if j1 == i1 {
			beta = 0
		}
		gemm(false, false, rows, hd, nk, 1, p, nk, s.v[j0*hd:], hd, beta, out, hd)
		if !alive {
			break
		}
	}
	if st := c.Stats; st != nil {
		for r := 0; r < rows; r++ {
			st.ent[task*t+i0+r], st.far[task*t+i0+r], st.first[task*t+i0+r] = s.ent[r], s.far[r], s.first[r]
		}
	}
}

// stickTile turns row, query i's scores for keys j0, j0+1, …, into its weights for those of its
// keys that are in the tile, 0 elsewhere, carrying row r's running sums. It reports whether the
// query's stick still reaches keys before j0.
func (k *attention[F]) stickTile(s *attnScratch[F], row []F, task, h, i, r, j0 int) bool {
	lo, last := max(k.cfg.firstKey(i), j0), min(k.cfg.lastKey(i), j0+len(row)-1)
	more := k.cfg.firstKey(i) < j0 // keys before the tile are the query's
	if lo > last {
		clear(row)
		return more && s.sum[r] >= stickDead
	}
	seg := row[lo-j0 : last-j0+1]
	k.adjust(seg, h, i, lo, s)
	s.sum[r] = stickRow(seg, nil, s.rest(len(seg)), s.sum[r])
	clear(row[:lo-j0])
	clear(row[last-j0+1:])
	if k.cfg.Stats != nil {
		ent, far := rowStats(seg, k.cfg.Stats.Far-(i-last))
		s.ent[r] += ent
		s.far[r] += far
		if lo == 0 {
			s.first[r] = float64(seg[0])
		}
	}
	return more && s.sum[r] >= stickDead
}
