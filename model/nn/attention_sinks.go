package nn

import (
	"math"

	"github.com/pkg/errors"
)

// Attention sinks (AttentionConfig.Sinks), as gpt-oss has them (Hugging Face's gpt_oss
// eager_attention_forward): each head h has a learned logit s_h, appended to every query's
// scores before the softmax and dropped after it, so that query i gives key j
//
//	p_ij = e^{x_ij} / (Σ_k e^{x_ik} + e^{s_h}),
//
// and what the sink takes, p_s = e^{s_h}/Z, goes to no value: a head may attend to nothing. The
// sink is added after every score stage (HF appends it after the mask), and not scaled.
//
// The sink has no value, so dp_sink = 0 and the scores' gradient is the softmax's own,
// p_ij·(dp_ij − Σ_k p_ik·dp_ik); the sink's is Σ over the queries of −p_s·Σ_k p_ik·dp_ik, which
// training keeps per (sequence, head, query) in k.sinkGrad and sums in a fixed order. Its
// statistics are those of the distribution over the keys and the sink: the entropy counts the
// sink's share, the far mass does not.

// sinksSoftmax is the softmax with a sink logit per head.
type sinksSoftmax[F float] struct{ k *attention[F] }

// refuses names what the sinks do not take yet: forget gates, whose gradient counts on a shift
// of a row leaving the weights as they are (the sink is not shifted), CoPE, and the other
// normalisers. A window or a remap takes the softmax's masked path, each row's sums starting
// from the sink's term (reset), as gpt-oss's banded layers add the sink after the mask.
func (sinksSoftmax[F]) refuses(c AttentionConfig) error {
	switch {
	case c.StickBreaking || c.Softpick:
		return errors.New("Attention: sinks are a term of the softmax: not with stick-breaking or softpick")
	case c.LogForget:
		return errors.New("Attention: sinks take no forget gates: their gradient counts on a shift of a row leaving the weights as they are")
	case c.CoPE:
		return errors.New("Attention: sinks take no contextual positions yet")
	}
	return nil
}

func (sinksSoftmax[F]) masks() bool { return true }

// sink is head h's sink logit.
func (n sinksSoftmax[F]) sink(h int) float64 { return float64(n.k.in.sinks[h]) }

// rows is softmaxRows with the sink: in training it keeps each row's p_s in k.sinkP.
func (n sinksSoftmax[F]) rows(p []F, ld, task, h, i0, i1 int, s *attnScratch[F], train bool) {
	k := n.k
	t, st := k.cfg.SeqLen, k.cfg.Stats
	sh := n.sink(h)
	for i := i0; i < i1; i++ {
		row := p[(i-i0)*ld : (i-i0)*ld+ld]
		lo := k.cfg.firstKey(i) // a window's keys before it get 0, as softmaxRows gives them
		seg := row[lo : i+1]
		if train && k.raw != nil {
			copy(k.raw[(task*t+i)*t+lo:], seg)
		}
		clear(row[:lo])
		k.adjust(seg, h, i, lo, s)
		m := sh
		for _, x := range seg {
			m = max(m, float64(x))
		}
		es := math.Exp(sh - m)
		inv := 1 / (expSum(seg, seg, F(m)) + es)
		for j := range seg {
			seg[j] *= F(inv)
		}
		clear(row[i+1:])
		ps := es * inv
		if train {
			k.sinkP[task*t+i] = ps
		}
		if st != nil {
			setRow(st, task*t+i, row[:i+1])
			if ps > 0 {
				st.ent[task*t+i] -= ps * math.Log(ps)
			}
		}
	}
}

// online evaluates rows too long for one tile as the softmax does (queriesOnline), each row's
// sums starting from the sink's term: maximum s_h, sum e^0 = 1.
func (n sinksSoftmax[F]) online(s *attnScratch[F], task, h, i0, i1 int) {
	n.k.queriesOnline(s, task, h, i0, i1, n)
}

func (n sinksSoftmax[F]) reset(s *attnScratch[F], r, h int) {
	s.max[r], s.sum[r], s.ent[r], s.far[r] = n.sink(h), 1, 0, 0
}
func (n sinksSoftmax[F]) fold(s *attnScratch[F], r int, row []F, valid, diag int) float64 {
	return s.update(r, row, valid, diag, n.k.cfg.Stats)
}
func (n sinksSoftmax[F]) finish(s *attnScratch[F], r int) (scale, entropy, farMass float64) {
	return softmax[F](n).finish(s, r)
}

// backward is the softmax's, row by row, keeping each row's part of the sink's gradient,
// −p_s·Σ_k p_ik·dp_ik.
func (n sinksSoftmax[F]) backward(task, h int, pt, ds, qscale []F, scale F, col []float64) {
	k := n.k
	t := k.cfg.SeqLen
	for i := 0; i < t; i++ {
		pr, dr := pt[i*t:i*t+i+1], ds[i*t:(i+1)*t]
		var dot float64
		for j, p := range pr {
			dot += float64(p) * float64(dr[j])
		}
		k.softmaxBackwardRow(task, h, i, pr, dr, dot, qscale, scale, col)
		k.sinkGrad[task*t+i] = -k.sinkP[task*t+i] * dot
	}
}

// sinksGrad writes the sink logits' gradient, each head's parts summed over the sequences and
// queries in order.
func (k *attention[F]) sinksGrad(dsinks []F) {
	c := k.cfg
	t := c.SeqLen
	for h := 0; h < c.Heads; h++ {
		var sum float64
		for b := 0; b < c.Batch; b++ {
			for _, g := range k.sinkGrad[(b*c.Heads+h)*t : (b*c.Heads+h+1)*t] {
				sum += g
			}
		}
		dsinks[h] = F(sum)
	}
}
