package nn

import (
	"math"

	"github.com/pkg/errors"
)

// Softpick (AttentionConfig.Softpick; Zuhri et al. 2025, arXiv 2504.20966) replaces the softmax:
// query i gives key j
//
//	y_ij = ReLU(e^{x_ij} − 1) / (Σ_k |e^{x_ik} − 1| + ε),
//
// so a key whose score is not positive gets exactly 0, and a row's weights sum to less than 1:
// a query may attend to nothing, where the softmax must put its mass somewhere (the attention
// sink). It is computed as the reference's softpick does (zaydzuhri/softpick-attention), against
// the row's maximum m for stability: u_j = e^{x_j−m} − e^{−m}, y_j = ReLU(u_j) / (Σ_k |u_k| + ε),
// ε = 10⁻⁸, the keys past the query left out of the sum. The shift by m changes y through ε only,
// but there it counts where a row's scores are all near 0 (Σ|u| small), so the backward pass
// differentiates it as the reference's autograd does, through the first maximal score.
//
// The backward pass, with S = Σ|u|, w_j = e^{x_j−m}/(S + ε) and dot = Σ_j g_j·y_j for g = dL/dy:
// u_j depends on x_j by e^{x_j−m}, and on m by −u_j, which gives ∂y_j/∂m = −y_j·ε/(S + ε), so
//
//	dx_j = w_j·(1[u_j > 0]·g_j − sign(u_j)·dot) − [j = argmax]·ε·dot/(S + ε),
//
// and training keeps a_j = sign(u_j)·w_j for each score (k.aux), and for each row its argmax
// and ε/(S + ε) (k.pick, k.pickEps): dx_j = max(a_j, 0)·g_j − a_j·dot, and the argmax's term.
//
// Evaluation of rows too long for one tile folds the tiles in with a running maximum, as the
// online softmax does: both ReLU(u) and |u| scale by e^{m_old−m_new} when the maximum grows. A
// window or a remap takes the softmax's masked path, which folds the keys a query sees a span
// at a time: the sum of |u| runs over those keys only, as the reference's over a row's finite
// entries, the masked ones at −inf.
const softpickEps = 1e-8

// refuses names what softpick does not take: forget gates and contextual positions, whose
// backward passes count on the softmax being unchanged by a shift of a row.
func (softpick[F]) refuses(c AttentionConfig) error {
	switch {
	case c.StickBreaking:
		return errors.New("Attention: softpick and stick-breaking both replace the softmax: take one")
	case c.LogForget:
		return errors.New("Attention: softpick takes no forget gates: their gradient counts on the softmax, which a shift of a row leaves as it is")
	case c.CoPE:
		return errors.New("Attention: softpick takes no contextual positions: they count the softmax's gates")
	}
	return nil
}

// softpick is the softpick normaliser.
type softpick[F float] struct{ k *attention[F] }

func (softpick[F]) masks() bool { return true }

// rows is softmaxRows for softpick: in training it keeps each score's a_j in k.aux. A window's
// keys before it get weight 0 and a_j = 0, so that the backward pass leaves them out.
func (n softpick[F]) rows(p []F, ld, task, h, i0, i1 int, s *attnScratch[F], train bool) {
	k := n.k
	t, st := k.cfg.SeqLen, k.cfg.Stats
	for i := i0; i < i1; i++ {
		row := p[(i-i0)*ld : (i-i0)*ld+ld]
		lo := k.cfg.firstKey(i)
		seg := row[lo : i+1]
		if train && k.raw != nil {
			copy(k.raw[(task*t+i)*t+lo:], seg)
		}
		clear(row[:lo])
		k.adjust(seg, h, i, lo, s)
		if !train {
			softpickRow(seg, nil)
		} else {
			r := task*t + i
			a := k.aux[r*t : r*t+i+1]
			clear(a[:lo])
			argmax, eps := softpickRow(seg, a[lo:])
			k.pick[r], k.pickEps[r] = argmax+int32(lo), eps
		}
		clear(row[i+1:])
		if st != nil {
			setRow(st, task*t+i, row[:i+1])
		}
	}
}

// softpickRow replaces row, one query's scores for all its keys, by their softpick weights, and
// with aux not nil keeps each key's a_j there. It returns the first maximal score's index and
// ε/(Σ|u| + ε).
func softpickRow[F float](row, aux []F) (argmax int32, epsShare float64) {
	m := row[0]
	for j, x := range row[1:] {
		if x > m {
			m, argmax = x, int32(j+1)
		}
	}
	expShiftRow(row, m) // e^{x−m}
	em := math.Exp(-float64(m))
	var sum float64
	for _, e := range row {
		sum += math.Abs(float64(e) - em)
	}
	inv := 1 / (sum + softpickEps)
	for j, e := range row {
		u := float64(e) - em
		if aux != nil {
			a := float64(e) * inv
			if u < 0 {
				a = -a
			} else if u == 0 {
				a = 0
			}
			aux[j] = F(a)
		}
		row[j] = F(max(u, 0) * inv)
	}
	return argmax, softpickEps * inv
}

// online computes the output of queries i0..i1−1 over their keys a tile at a time
// (queriesOnline): s.max is each row's running maximum, s.sum its Σ|u| and s.far its far
// ReLU(u), s.ent its Σ r·log r of r = ReLU(u), and s.rsum its Σ r, all against the running
// maximum.
func (n softpick[F]) online(s *attnScratch[F], task, h, i0, i1 int) {
	n.k.queriesOnline(s, task, h, i0, i1, n)
}

func (softpick[F]) reset(s *attnScratch[F], r, _ int) {
	s.max[r], s.sum[r], s.ent[r], s.far[r], s.rsum[r] = math.Inf(-1), 0, 0, 0, 0
}

// finish divides by Σ|u| + ε; the entropy −Σ y log y with y = r/den is (R·log den − Σ r log r)/den.
func (softpick[F]) finish(s *attnScratch[F], r int) (scale, entropy, farMass float64) {
	den := s.sum[r] + softpickEps
	return 1 / den, (s.rsum[r]*math.Log(den) - s.ent[r]) / den, s.far[r] / den
}

// fold folds the first valid scores of row r into its running sums, replacing them by ReLU(u)
// against the new maximum and zeroing the rest of the row; diag is the diagonal's index in row.
// It returns the factor by which the row's earlier terms shrink.
func (n softpick[F]) fold(s *attnScratch[F], r int, row []F, valid, diag int) float64 {
	clear(row[valid:])
	if valid == 0 {
		return 1
	}
	m := s.max[r]
	for _, x := range row[:valid] {
		m = max(m, float64(x))
	}
	corr := n.rebase(s, r, m)
	var acc tileSums
	n.weigh(row[:valid], m, diag, n.k.cfg.Stats, &acc)
	n.add(s, r, acc)
	return corr
}

// rebase moves row r's sums to the maximum m: every term scales by c = e^{m_old−m}, and
// Σ c·r·log(c·r) = c·(Σ r log r + R·log c).
func (softpick[F]) rebase(s *attnScratch[F], r int, m float64) float64 {
	corr := 1.0
	if !math.IsInf(s.max[r], -1) {
		corr = math.Exp(s.max[r] - m)
		s.ent[r] = corr * (s.ent[r] + s.rsum[r]*(s.max[r]-m))
		s.sum[r] *= corr
		s.far[r] *= corr
		s.rsum[r] *= corr
	}
	s.max[r] = m
	return corr
}

// weigh replaces keys by ReLU(u), u = e^{x−m} − e^{−m}, adding Σ|u| and, for the statistics,
// Σ ReLU(u), Σ r log r and the far keys' ReLU(u) into acc.
func (softpick[F]) weigh(keys []F, m float64, diag int, st *AttentionStats, acc *tileSums) {
	em := math.Exp(-m)
	expShiftRow(keys, F(m)) // e^{x−m}, eight at a time
	for j, e := range keys {
		u := float64(e) - em
		acc.sum += math.Abs(u)
		if u <= 0 {
			keys[j] = 0
			continue
		}
		keys[j] = F(u)
		if st == nil {
			continue
		}
		acc.rsum += u
		acc.ent += u * math.Log(u)
		if diag-j >= st.Far {
			acc.far += u
		}
	}
}

func (softpick[F]) add(s *attnScratch[F], r int, acc tileSums) {
	s.sum[r] += acc.sum
	s.rsum[r] += acc.rsum
	s.ent[r] += acc.ent
	s.far[r] += acc.far
}

// backward is softmaxBackward for softpick: one task's dy = do·vᵀ in ds becomes the scores'
// gradient, row by row, then the stages' bookkeeping (rowGrad).
func (n softpick[F]) backward(task, h int, pt, ds, qscale []F, scale F, col []float64) {
	k := n.k
	t := k.cfg.SeqLen
	for i := 0; i < t; i++ {
		pr, dr := pt[i*t:i*t+i+1], ds[i*t:(i+1)*t]
		a := k.aux[(task*t+i)*t : (task*t+i)*t+i+1]
		var dot float64
		for j, y := range pr {
			dot += float64(y) * float64(dr[j])
		}
		for j, aj := range a {
			dr[j] = F(float64(max(aj, 0))*float64(dr[j]) - float64(aj)*dot)
		}
		r := task*t + i
		dr[k.pick[r]] -= F(k.pickEps[r] * dot)
		k.rowGrad(task, h, i, pr, dr, qscale, scale, col)
	}
}

// rowGrad finishes row i of a task's backward pass, given dr[:len(pr)], the gradient of the
// row's scores after every stage: it keeps a learned bias's part in pr (which the step no longer
// needs), a learned query scale's sum, and the forget gates' column sums in col, multiplies the
// row by scale and the query's scale, and zeroes the future keys. Every normaliser with rows
// ends its backward pass with it (softmaxBackwardRow, softpick's).
func (k *attention[F]) rowGrad(task, h, i int, pr, dr, qscale []F, scale F, col []float64) {
	t := k.cfg.SeqLen
	rowScale := scale
	if qscale != nil {
		rowScale = qscale[h*t+i] * scale
	}
	var sg float64
	for j := range pr {
		g := dr[j]
		if k.cfg.LearnBias {
			pr[j] = g
		}
		if k.raw != nil {
			sg += float64(g) * float64(k.raw[(task*t+i)*t+j])
		}
		if col != nil {
			col[j] += float64(g)
		}
		dr[j] = g * rowScale
	}
	if k.raw != nil {
		k.scaleGrad[task*t+i] = sg
	}
	clear(dr[len(pr):])
}
