// Package stock writes the model's layers with gorgonia's stock ops only. It is the reference
// the fused ops of package nn are tested against, and the "before" of the speed comparison.
//
// Two stock ops have wrong gradients in gorgonia v0.9.18 and are avoided here: InverseSqrt
// (Inverse(Sqrt(x)) is used instead) and ByIndices on 1-D inputs or along axis 1 (only axis 0 of
// a matrix is used).
package stock

import (
	"fmt"
	"math"
	"sync/atomic"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"extrapolate/model/nn"
)

var serial atomic.Uint64

// constant returns a constant node holding v in x's dtype.
func constant(x *G.Node, v float64) *G.Node {
	if x.Dtype() == tensor.Float32 {
		return G.NewConstant(float32(v))
	}
	return G.NewConstant(v)
}

// table returns a constant tensor with values v (float64) in x's dtype; gorgonia merges
// constants by name, so each gets a unique one.
func table(g *G.ExprGraph, dt tensor.Dtype, v []float64, shape ...int) *G.Node {
	var t *tensor.Dense
	if dt == tensor.Float32 {
		f := make([]float32, len(v))
		for i, x := range v {
			f[i] = float32(x)
		}
		t = tensor.New(tensor.WithShape(shape...), tensor.WithBacking(f))
	} else {
		t = tensor.New(tensor.WithShape(shape...), tensor.WithBacking(append([]float64(nil), v...)))
	}
	return G.NewConstant(t, G.WithName(fmt.Sprintf("const%d", serial.Add(1))))
}

// Linear returns x·w + b.
func Linear(x, w, b *G.Node) (*G.Node, error) {
	xw, err := G.Mul(x, w)
	if err != nil {
		return nil, err
	}
	return G.BroadcastAdd(xw, b, nil, []byte{0})
}

// GELU is the tanh approximation, 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))).
func GELU(x *G.Node) (*G.Node, error) {
	x3, err := G.Cube(x)
	if err != nil {
		return nil, err
	}
	inner := G.Must(G.Add(x, G.Must(G.Mul(x3, constant(x, 0.044715)))))
	t := G.Must(G.Tanh(G.Must(G.Mul(inner, constant(x, math.Sqrt(2/math.Pi))))))
	half := G.Must(G.Mul(x, constant(x, 0.5)))
	return G.HadamardProd(half, G.Must(G.Add(t, constant(x, 1))))
}

// LayerNorm normalises the rows of x, then scales by g and shifts by b.
func LayerNorm(x, g, b *G.Node, eps float64) (*G.Node, error) {
	mean, err := G.Mean(x, 1)
	if err != nil {
		return nil, err
	}
	xc := G.Must(G.BroadcastSub(x, mean, nil, []byte{1}))
	variance := G.Must(G.Mean(G.Must(G.Square(xc)), 1))
	rstd := G.Must(G.Inverse(G.Must(G.Sqrt(G.Must(G.Add(variance, constant(x, eps)))))))
	xh := G.Must(G.BroadcastHadamardProd(xc, rstd, nil, []byte{1}))
	y := G.Must(G.BroadcastHadamardProd(xh, g, nil, []byte{0}))
	return G.BroadcastAdd(y, b, nil, []byte{0})
}

// Embed returns wte[ids] plus, with a position table pe, pe[t] for each token's position t in
// its sequence of seqLen.
func Embed(ids, wte, pe *G.Node, seqLen int) (*G.Node, error) {
	x, err := G.ByIndices(wte, ids, 0)
	if err != nil {
		return nil, err
	}
	if pe == nil {
		return x, nil
	}
	n := ids.Shape()[0]
	pos := make([]int, n)
	for i := range pos {
		pos[i] = i % seqLen
	}
	posNode := G.NewConstant(tensor.New(tensor.WithShape(n), tensor.WithBacking(pos)), G.WithName(fmt.Sprintf("pos%d", serial.Add(1))))
	p, err := G.ByIndices(pe, posNode, 0)
	if err != nil {
		return nil, err
	}
	return G.Add(x, p)
}

// CrossEntropy returns the mean of -log softmax(logits)[target] over rows, with the targets
// given one-hot, (n, vocab).
func CrossEntropy(logits, onehot *G.Node) (*G.Node, error) {
	ls, err := G.LogSoftMax(logits, 1)
	if err != nil {
		return nil, err
	}
	picked := G.Must(G.Sum(G.Must(G.HadamardProd(ls, onehot))))
	n := float64(logits.Shape()[0])
	return G.Mul(picked, constant(logits, -1/n))
}

// Attention is nn.Attention written with stock ops: heads are split out by reshapes and
// transposes, a rotation is x⊙cos + (x·R)⊙sin with R the constant matrix that swaps each pair
// with a sign, and the causal mask (with the window's, if any) and bias are one added constant.
// It has no remap, which is for evaluation only.
func Attention(q, k, v, bias, qscale *G.Node, cfg nn.AttentionConfig) (*G.Node, error) {
	return AttentionWith(q, k, v, nn.AttentionInputs{Bias: bias, Scale: qscale}, cfg)
}

// AttentionWith is nn.AttentionWith written with stock ops: Attention, and the forget gates'
// bias as a product of the log gates with a constant matrix (forgetScores).
func AttentionWith(q, k, v *G.Node, x nn.AttentionInputs, cfg nn.AttentionConfig) (*G.Node, error) {
	if cfg.Remap != nil {
		return nil, fmt.Errorf("stock.Attention: no remap")
	}
	if (x.LogForget != nil) != cfg.LogForget {
		return nil, fmt.Errorf("stock.Attention: log forget gates %v for forget gates %v", x.LogForget, cfg.LogForget)
	}
	if (x.CoPE != nil) != cfg.CoPE {
		return nil, fmt.Errorf("stock.Attention: position embeddings %v for CoPE %v", x.CoPE, cfg.CoPE)
	}
	bias, qscale := x.Bias, x.Scale
	g, dt := q.Graph(), q.Dtype()
	b, t, h := cfg.Batch, cfg.SeqLen, cfg.Heads
	d := q.Shape()[1]
	hd := d / h
	split := func(x *G.Node, rotate bool, cosT, sinT []float64) (*G.Node, error) {
		x, err := G.Reshape(x, tensor.Shape{b, t, h, hd})
		if err != nil {
			return nil, err
		}
		x = G.Must(G.Transpose(x, 0, 2, 1, 3))
		if rotate && cfg.Positions.Pairs > 0 {
			x = G.Must(G.Reshape(x, tensor.Shape{b * h * t, hd}))
			c, s, r := rotationTables(cfg, hd, cosT, sinT)
			cn := table(g, dt, c, b*h*t, hd)
			sn := table(g, dt, s, b*h*t, hd)
			rn := table(g, dt, r, hd, hd)
			x = G.Must(G.Add(G.Must(G.HadamardProd(x, cn)), G.Must(G.HadamardProd(G.Must(G.Mul(x, rn)), sn))))
		}
		return G.Reshape(x, tensor.Shape{b * h, t, hd})
	}
	pos := cfg.Positions
	qh, err := split(q, true, pos.Cos, pos.Sin)
	if err != nil {
		return nil, err
	}
	kc, ks := pos.Cos, pos.Sin
	if pos.KeyCos != nil {
		kc, ks = pos.KeyCos, pos.KeySin
	}
	kh := G.Must(split(k, true, kc, ks))
	vh := G.Must(split(v, false, nil, nil))
	scores := G.Must(G.BatchedMatMul(qh, kh, false, true))
	scores = G.Must(G.Mul(scores, constant(q, 1/math.Sqrt(float64(hd)))))
	raw := scores
	if qscale != nil {
		// Row i of head h times qscale[h][i]: through the (t, t·t) matrix that copies entry i to
		// every (i, j), then across the batch.
		spread := make([]float64, t*t*t)
		for i := 0; i < t; i++ {
			for j := 0; j < t; j++ {
				spread[i*t*t+i*t+j] = 1
			}
		}
		full := G.Must(G.Mul(qscale, table(g, dt, spread, t, t*t)))
		scores = G.Must(G.HadamardProd(scores, tiled(full, cfg)))
	}
	if x.Scores != nil {
		s, err := x.Scores(scores)
		if err != nil {
			return nil, err
		}
		if !s.Shape().Eq(scores.Shape()) || s.Dtype() != dt {
			return nil, fmt.Errorf("stock: a score stage gave %v of shape %v, want %v of shape %v", s.Dtype(), s.Shape(), dt, scores.Shape())
		}
		scores = s
	}
	mask := causalMask(cfg, -1e9, 0)
	if x.CoPE != nil {
		scores = G.Must(G.Add(scores, copeScores(qh, raw, x.CoPE, mask, cfg)))
	}
	if !cfg.StickBreaking {
		scores = G.Must(G.Add(scores, table(g, dt, mask, b*h, t, t)))
	}
	if bias != nil {
		scores = G.Must(G.Add(scores, biasScores(bias, cfg)))
	}
	if x.LogForget != nil {
		scores = G.Must(G.Add(scores, forgetScores(x.LogForget, cfg)))
	}
	var p *G.Node
	switch {
	case x.Weights != nil:
		if p, err = weightsOf(scores, x.Weights, cfg); err != nil {
			return nil, err
		}
	case cfg.StickBreaking:
		p = stickBreaking(scores, cfg)
	case cfg.Softpick:
		p = softpick(scores, cfg)
	case x.Sinks != nil:
		p = sinkSoftmax(scores, x.Sinks, cfg)
	default:
		p = G.Must(G.SoftMax(scores, 2))
	}
	o := G.Must(G.BatchedMatMul(p, vh))
	o = G.Must(G.Reshape(o, tensor.Shape{b, h, t, hd}))
	o = G.Must(G.Transpose(o, 0, 2, 1, 3))
	return G.Reshape(o, tensor.Shape{b * t, d})
}

// weightsOf is a normaliser of a scheme's own (AttentionInputs.Weights) on the masked scores,
// checked to keep their shape and type. It replaces the softmax, and takes none of the other
// normalisers: it is checked alone.
func weightsOf(scores *G.Node, weights func(scores, seen *G.Node) (*G.Node, error), cfg nn.AttentionConfig) (*G.Node, error) {
	if cfg.StickBreaking || cfg.Softpick || cfg.Sinks {
		return nil, fmt.Errorf("stock: a normaliser of a scheme's own replaces the softmax, and takes no stick-breaking, softpick or sinks")
	}
	g, dt := scores.Graph(), scores.Dtype()
	b, t, h := cfg.Batch, cfg.SeqLen, cfg.Heads
	p, err := weights(scores, table(g, dt, causalMask(cfg, 0, 1), b*h, t, t))
	if err != nil {
		return nil, err
	}
	if !p.Shape().Eq(scores.Shape()) || p.Dtype() != dt {
		return nil, fmt.Errorf("stock: a normaliser gave %v of shape %v, want %v of shape %v", p.Dtype(), p.Shape(), dt, scores.Shape())
	}
	return p, nil
}

// causalMask is (b·h, t, t) with in at the keys each query sees (the earlier keys in its window,
// itself too unless it is stick-breaking without AttendCurrent) and out elsewhere.
func causalMask(cfg nn.AttentionConfig, out, in float64) []float64 {
	b, t, h := cfg.Batch, cfg.SeqLen, cfg.Heads
	last := 0 // the last key query i sees is i − last
	if cfg.StickBreaking && !cfg.AttendCurrent {
		last = 1
	}
	mask := make([]float64, b*h*t*t)
	for bh := 0; bh < b*h; bh++ {
		for i := 0; i < t; i++ {
			for j := 0; j < t; j++ {
				m := out
				if j <= i-last && (cfg.Window == 0 || i-j < cfg.Window) {
					m = in
				}
				mask[(bh*t+i)*t+j] = m
			}
		}
	}
	return mask
}

// stickBreaking is stick-breaking attention's weights of the scores z, (b·h, t, t), as the
// reference's naive sb_ref.stickbreaking computes them: log σ(z) masked to the keys each query
// sees (−1e9 elsewhere), log(1−σ(z)) = log σ(−z) zeroed outside them, and the latter summed over
// the keys between key j and the query by a product with the constant (t, t) matrix C, C[k][j] = 1
// for j < k (sb_ref's einsum with cum_weight = tril(−1)); then A = exp of the sum. The
// log-sigmoids are −log(1 + e^∓z), exact for the moderate scores of the tests.
func stickBreaking(z *G.Node, cfg nn.AttentionConfig) *G.Node {
	g, dt := z.Graph(), z.Dtype()
	b, t, h := cfg.Batch, cfg.SeqLen, cfg.Heads
	logSigmoid := func(x *G.Node) *G.Node {
		return G.Must(G.Neg(G.Must(G.Log1p(G.Must(G.Exp(G.Must(G.Neg(x))))))))
	}
	keep := table(g, dt, causalMask(cfg, 0, 1), b*h, t, t)
	logz := G.Must(G.Add(logSigmoid(z), table(g, dt, causalMask(cfg, -1e9, 0), b*h, t, t)))
	logBeta := G.Must(G.HadamardProd(logSigmoid(G.Must(G.Neg(z))), keep))
	c := make([]float64, t*t)
	for k := 0; k < t; k++ {
		for j := 0; j < k; j++ {
			c[k*t+j] = 1
		}
	}
	rows := G.Must(G.Reshape(logBeta, tensor.Shape{b * h * t, t}))
	cum := G.Must(G.Reshape(G.Must(G.Mul(rows, table(g, dt, c, t, t))), tensor.Shape{b * h, t, t}))
	return G.Must(G.Exp(G.Must(G.Add(logz, cum))))
}

// biasScores expands a bias to the scores' shape (b·h, t, t) with products of constant matrices:
// a bias by distance through the (t, t·t) matrix that picks distance i−j for entry (i, j ≤ i),
// and across the batch through a column of ones.
func biasScores(bias *G.Node, cfg nn.AttentionConfig) *G.Node {
	g, dt := bias.Graph(), bias.Dtype()
	t, h := cfg.SeqLen, cfg.Heads
	var full *G.Node
	if cfg.Bias == nn.PerQuery {
		full = G.Must(G.Reshape(bias, tensor.Shape{h, t * t}))
	} else {
		pick := make([]float64, t*t*t)
		for i := 0; i < t; i++ {
			for j := 0; j <= i; j++ {
				pick[(i-j)*t*t+i*t+j] = 1
			}
		}
		full = G.Must(G.Mul(bias, table(g, dt, pick, t, t*t)))
	}
	return tiled(full, cfg)
}

// forgetScores is the forget gates' bias in the scores' shape (b·h, t, t): D_ij = Σ_{l=j+1..i}
// log f_l, each sequence's and head's log gates (a row of t, after a transpose) times the
// constant (t, t·t) matrix with a 1 at row l and column (i, j) for j < l ≤ i.
func forgetScores(logf *G.Node, cfg nn.AttentionConfig) *G.Node {
	g, dt := logf.Graph(), logf.Dtype()
	b, t, h := cfg.Batch, cfg.SeqLen, cfg.Heads
	rows := G.Must(G.Reshape(logf, tensor.Shape{b, t, h}))
	rows = G.Must(G.Transpose(rows, 0, 2, 1))
	rows = G.Must(G.Reshape(rows, tensor.Shape{b * h, t}))
	sums := make([]float64, t*t*t)
	for i := 0; i < t; i++ {
		for j := 0; j < i; j++ {
			for l := j + 1; l <= i; l++ {
				sums[l*t*t+i*t+j] = 1
			}
		}
	}
	d := G.Must(G.Mul(rows, table(g, dt, sums, t, t*t)))
	return G.Must(G.Reshape(d, tensor.Shape{b * h, t, t}))
}

// LogForget is nn.LogForget written with stock ops: the layer's slices of w and b, x·w + b, and
// log σ(z) = −log(1 + e^−z), which is exact for the moderate logits of the tests (gorgonia's
// Softplus returns x itself beyond 16, a relative error of 1e-7).
func LogForget(x, w, b *G.Node, layer int) (*G.Node, error) {
	wl, err := G.Slice(w, G.S(layer))
	if err != nil {
		return nil, err
	}
	bl := G.Must(G.Slice(b, G.S(layer)))
	z := G.Must(Linear(x, wl, bl))
	return G.Neg(G.Must(G.Log1p(G.Must(G.Exp(G.Must(G.Neg(z)))))))
}

// tiled repeats a (h, t·t) node for every sequence of the batch, as (b·h, t, t).
func tiled(full *G.Node, cfg nn.AttentionConfig) *G.Node {
	g, dt := full.Graph(), full.Dtype()
	b, t, h := cfg.Batch, cfg.SeqLen, cfg.Heads
	ones := make([]float64, b)
	for i := range ones {
		ones[i] = 1
	}
	row := G.Must(G.Reshape(full, tensor.Shape{1, h * t * t}))
	rep := G.Must(G.Mul(table(g, dt, ones, b, 1), row))
	return G.Must(G.Reshape(rep, tensor.Shape{b * h, t, t}))
}

// rotationTables expands the rotation to the (b·h·t, hd) cos and sin factors and the (hd, hd)
// pair-swap matrix R, with (x·R)[a] = -x[b] and (x·R)[b] = x[a] for each rotated pair (a, b).
func rotationTables(cfg nn.AttentionConfig, hd int, cosT, sinT []float64) (cos, sin, r []float64) {
	p := cfg.Positions
	t := cfg.SeqLen
	rows := cfg.Batch * cfg.Heads * t
	cos, sin, r = make([]float64, rows*hd), make([]float64, rows*hd), make([]float64, hd*hd)
	pair := func(j int) (int, int) {
		if p.Interleaved {
			return 2 * j, 2*j + 1
		}
		return j, j + p.Pairs
	}
	for j := 0; j < p.Pairs; j++ {
		a, bb := pair(j)
		r[bb*hd+a] = -1
		r[a*hd+bb] = 1
	}
	for row := 0; row < rows; row++ {
		pos := row % t
		for e := 0; e < hd; e++ {
			cos[row*hd+e] = 1 // dimensions outside the rotated pairs pass through
		}
		for j := 0; j < p.Pairs; j++ {
			a, bb := pair(j)
			c, s := cosT[pos*p.Pairs+j], sinT[pos*p.Pairs+j]
			cos[row*hd+a], cos[row*hd+bb] = c, c
			sin[row*hd+a], sin[row*hd+bb] = s, s
		}
	}
	return cos, sin, r
}

// softpick is softpick's weights of the scores x, (b·h, t, t), the causal mask already added, as
// the reference's naive softpick computes them: the row's maximum m subtracted, u = e^{x−m} −
// e^{−m}, ReLU(u) over the sum of |u| over the keys each query sees (the mask's 0/1 form: a
// masked key's u is −e^{−m}, not 0) plus 10⁻⁸. Gorgonia differentiates it all, m too, as PyTorch
// does the reference.
func softpick(x *G.Node, cfg nn.AttentionConfig) *G.Node {
	g, dt := x.Graph(), x.Dtype()
	b, t, h := cfg.Batch, cfg.SeqLen, cfg.Heads
	m := G.Must(G.Max(x, 2))
	e := G.Must(G.Exp(G.Must(G.BroadcastSub(x, m, nil, []byte{2}))))
	u := G.Must(G.BroadcastSub(e, G.Must(G.Exp(G.Must(G.Neg(m)))), nil, []byte{2}))
	seen := table(g, dt, causalMask(cfg, 0, 1), b*h, t, t)
	sum := G.Must(G.Sum(G.Must(G.HadamardProd(G.Must(G.Abs(u)), seen)), 2))
	den := G.Must(G.Add(sum, constant(x, 1e-8)))
	return G.Must(G.BroadcastHadamardDiv(G.Must(G.Rectify(u)), den, nil, []byte{2}))
}

// sinkSoftmax is the softmax with a sink logit per head over the scores x, (b·h, t, t), as
// Hugging Face's gpt_oss computes it: the head's sink appended to every row as one more column,
// the softmax, and the column dropped. The column is the sinks times the constant (h, b·h·t)
// matrix that copies head h's logit to each of its rows.
func sinkSoftmax(x, sinks *G.Node, cfg nn.AttentionConfig) *G.Node {
	g, dt := x.Graph(), x.Dtype()
	b, t, h := cfg.Batch, cfg.SeqLen, cfg.Heads
	spread := make([]float64, h*b*h*t)
	for bh := 0; bh < b*h; bh++ {
		for i := 0; i < t; i++ {
			spread[(bh%h)*b*h*t+bh*t+i] = 1
		}
	}
	col := G.Must(G.Mul(G.Must(G.Reshape(sinks, tensor.Shape{1, h})), table(g, dt, spread, h, b*h*t)))
	all := G.Must(G.Concat(2, x, G.Must(G.Reshape(col, tensor.Shape{b * h, t, 1}))))
	return G.Must(G.Slice(G.Must(G.SoftMax(all, 2)), nil, nil, G.S(0, t)))
}
