package nn

import (
	"math"

	"github.com/chewxy/hm"
	"github.com/pkg/errors"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	asm "extrapolate/internal/gemm"
)

// Attention returns causal multi-head attention of q, k and v, each (batch·seqLen, d) with the
// heads side by side along d: softmax(scale·q·kᵀ/√(d/heads) + bias, over earlier keys)·v, with q
// and k rotated first when cfg.Positions has a rotation. bias, laid out as cfg.Bias says, is nil
// when cfg.Bias is NoBias; scale, (heads, seqLen), is nil unless cfg.QueryScale. The result has
// q's shape.
func Attention(q, k, v, bias, scale *G.Node, cfg AttentionConfig) (*G.Node, error) {
	return AttentionWith(q, k, v, AttentionInputs{Bias: bias, Scale: scale}, cfg)
}

// AttentionWith is Attention with every input the config can ask for, the log forget gates and
// CoPE's position embeddings too.
func AttentionWith(q, k, v *G.Node, x AttentionInputs, cfg AttentionConfig) (*G.Node, error) {
	if (cfg.BiasRow == nil) == (cfg.Bias == ByRow) {
		return nil, errors.Errorf("Attention: bias form %d with BiasRow %v", cfg.Bias, cfg.BiasRow != nil)
	}
	if x.Scores != nil || x.Weights != nil {
		return nil, errors.New("Attention: a stage with no fused kernel (AttentionInputs.Scores, Weights) runs on the stock ops (package stock)")
	}
	in := []*G.Node{q, k, v}
	for _, opt := range cfg.inputs() {
		if n := opt.node(x); (n != nil) != opt.on {
			return nil, errors.Errorf("Attention: %s %v, but the config asks for it: %v", opt.name, n, opt.on)
		} else if n != nil {
			in = append(in, n)
		}
	}
	kr, err := byDtype(q, &attention[float32]{cfg: cfg}, &attention[float64]{cfg: cfg})
	if err != nil {
		return nil, err
	}
	return apply(kr, in...)
}

// pass holds the values of the inputs of the current forward or backward pass: set before the
// workers start, read-only while they run.
type pass[F float] struct {
	q, k, v, bias, qscale, logf []F
	sinks                       []F
	d                           int // the rows' width: every head's dimensions side by side
}

type attention[F float] struct {
	cfg AttentionConfig
	in  pass[F]
	// stages are the score stages the config asks for, in order, and norm its normaliser
	// (attention_stages.go).
	stages []scoreStage[F]
	norm   normaliser[F]
	// train keeps what the backward pass needs; without it the op computes the output only,
	// reusing a scratch buffer per worker, so evaluating long sequences stays small.
	train      bool
	cos, sin   []F
	kcos, ksin []F // the keys' tables: cos and sin themselves unless the positions set others
	// The remap's tables, nil where it has none.
	acos, asin, akcos, aksin []F
	// Kept for the backward pass when training, per (batch, head): the rotated q and k, v, and
	// the attention probabilities.
	qr, kr, vv, p []F
	scratch       []attnScratch[F]
	// biasAcc sums a learned bias's gradient for each head, in float64; distAcc, with position
	// ids, its sums by distance.
	biasAcc, distAcc [][]float64
	// For a learned query scale: the scores before the scale, and the scale's gradient for each
	// (sequence, head, query).
	raw       []F
	scaleGrad []float64
	// sig keeps, for stick-breaking in training, the σ of each score, laid out as p; aux, for
	// softpick, each score's sign(u)·e^{x−m}/(Σ|u| + ε).
	sig, aux []F
	// pick and pickEps keep, for softpick in training, each row's first maximal score and
	// ε/(Σ|u| + ε), for the gradient through its shift.
	pick    []int32
	pickEps []float64
	// sinkP and sinkGrad keep, with sinks in training, each row's sink share p_s and its part
	// of the sink's gradient.
	sinkP, sinkGrad []float64
	// For CoPE: the acting layer's embeddings (hd, npos) and, in training, the gates of every
	// (sequence, head, query, key) and each task's part of the embeddings' gradient.
	emb, gate, demb []F
	npos            int
}

type attnScratch[F float] struct {
	q, k, v, o, s []F
	dq, dk, dv    []F
	biasRow       []float64 // a query's ByRow bias
	// For CoPE: the position logits z of a block of queries from zFrom, their gradient in
	// training, each row's running sum of gates, a run of keys' position logits, and in training
	// a row's positions.
	z, dz     []F
	zFrom     int
	gsum, pos []float64
	cl        []F
	g         []F // in training, the row of attention.gate that softmaxRows points it at
	// For the forget gates: the running sum c of the task's log f, and in training the column
	// sums of the scores' gradient.
	cum, col []float64
	// For stick-breaking: a row's log(1−β) of each score.
	sp []F
	// For the tiled evaluation: each row's running maximum, sum of exponentials, sum of
	// exponentials times the score less the maximum (for the entropy), sum over far keys, and
	// key 0's term (for the sink rate).
	max, sum, ent, far, first []float64
	// For the masked evaluation (attention_masked.go): q and k rotated at the remap's alternate
	// positions and a tile of their scores, and a block of queries' spans, row r's at
	// spans[spanEnd[r]:spanEnd[r+1]]; err is the first bad span a worker met.
	qa, ka, sa []F
	spans      []Span
	spanEnd    []int
	err        error
	// ids are the positions of the current task's tokens (AttentionConfig.idsOf), nil at
	// 0..n−1.
	ids []int
	// rsum is, for softpick's online evaluation, each row's running Σ ReLU(u).
	rsum []float64
	// altDistance says that the span being adjusted is an Alt one of a remap that maps
	// distances: the bias stage takes its bias at the remap's distance.
	altDistance bool
}

func (k *attention[F]) String() string { return "Attention" }
func (k *attention[F]) signature() ([]hm.Type, hm.Type) {
	in := []hm.Type{floats(2), floats(2), floats(2)}
	for _, opt := range k.cfg.inputs() {
		if opt.on {
			in = append(in, floats(opt.dims))
		}
	}
	return in, floats(2)
}
func (k *attention[F]) diffWRT() []bool {
	d := []bool{true, true, true}
	for _, opt := range k.cfg.inputs() {
		if opt.on {
			d = append(d, opt.learn)
		}
	}
	return d
}
func (k *attention[F]) willDifferentiate() { k.train = true }

func (k *attention[F]) shape(in []tensor.Shape) (tensor.Shape, error) {
	c := k.cfg
	q := in[0]
	if len(q) != 2 || !q.Eq(in[1]) || !q.Eq(in[2]) {
		return nil, errors.Errorf("Attention: shapes q %v, k %v, v %v differ", in[0], in[1], in[2])
	}
	if c.Heads <= 0 || q[1]%c.Heads != 0 || c.Batch*c.SeqLen != q[0] {
		return nil, errors.Errorf("Attention: shape %v does not fit %d sequences of %d with %d heads", q, c.Batch, c.SeqLen, c.Heads)
	}
	hd := q[1] / c.Heads
	if err := c.checkIDs(); err != nil {
		return nil, err
	}
	if p := c.Positions; p.Pairs > 0 {
		n := c.positions() * p.Pairs
		if 2*p.Pairs > hd || len(p.Cos) < n || len(p.Sin) < n || p.KeyCos != nil && (len(p.KeyCos) < n || len(p.KeySin) < n) {
			return nil, errors.Errorf("Attention: rotation of %d pairs over %d positions does not fit head dimension %d", p.Pairs, c.positions(), hd)
		}
	}
	if err := c.checkMasking(); err != nil {
		return nil, err
	}
	if err := k.checkPipeline(); err != nil {
		return nil, err
	}
	bi, si, fi := c.extra()
	if len(in) != len(k.diffWRT()) {
		return nil, errors.Errorf("Attention: %d inputs, want %d", len(in), len(k.diffWRT()))
	}
	if bi >= 0 {
		want := tensor.Shape{c.Heads, c.positions()}
		if c.Bias == PerQuery {
			want = tensor.Shape{c.Heads, c.positions(), c.positions()}
		}
		if !in[bi].Eq(want) {
			return nil, errors.Errorf("Attention: bias of shape %v, want %v", in[bi], want)
		}
	}
	if si >= 0 && !in[si].Eq(tensor.Shape{c.Heads, c.SeqLen}) {
		return nil, errors.Errorf("Attention: query scale of shape %v, want %v", in[si], tensor.Shape{c.Heads, c.SeqLen})
	}
	if fi >= 0 && !in[fi].Eq(tensor.Shape{c.Batch * c.SeqLen, c.Heads}) {
		return nil, errors.Errorf("Attention: log forget gates of shape %v, want %v", in[fi], tensor.Shape{c.Batch * c.SeqLen, c.Heads})
	}
	if ci := c.copeInput(); ci >= 0 {
		if err := c.checkCoPE(in[ci], hd); err != nil {
			return nil, err
		}
	}
	if x := c.index("sink logits"); x >= 0 && !in[x].Eq(tensor.Shape{c.Heads}) {
		return nil, errors.Errorf("Attention: sink logits of shape %v, want %v", in[x], tensor.Shape{c.Heads})
	}
	return q.Clone(), nil
}

// setup converts the position tables and sizes the buffers, once.
func (k *attention[F]) setup(d int) {
	if k.scratch != nil {
		return
	}
	c := k.cfg
	p := c.Positions
	if k.norm == nil {
		k.build()
	}
	k.cos, k.sin = convert[F](p.Cos), convert[F](p.Sin)
	k.kcos, k.ksin = k.cos, k.sin
	if p.KeyCos != nil {
		k.kcos, k.ksin = convert[F](p.KeyCos), convert[F](p.KeySin)
	}
	t, hd := c.SeqLen, d/c.Heads
	if k.train {
		n := c.Batch * c.Heads * t
		k.qr, k.kr, k.vv, k.p = make([]F, n*hd), make([]F, n*hd), make([]F, n*hd), make([]F, n*t)
		if c.LearnQueryScale {
			k.raw, k.scaleGrad = make([]F, n*t), make([]float64, n)
		}
		if c.StickBreaking {
			k.sig = make([]F, n*t)
		}
		if c.Softpick {
			k.aux, k.pick, k.pickEps = make([]F, n*t), make([]int32, n), make([]float64, n)
		}
		if c.Sinks {
			k.sinkP, k.sinkGrad = make([]float64, n), make([]float64, n)
		}
		if c.CoPE {
			k.gate, k.demb = make([]F, n*t), make([]F, c.Batch*c.Heads*hd*k.npos)
		}
	}
	k.scratch = make([]attnScratch[F], workers())
	for w := range k.scratch {
		s := &k.scratch[w]
		s.o = make([]F, t*hd)
		if c.Bias == ByRow {
			s.biasRow = make([]float64, min(t, tileKeys))
		}
		if c.LogForget {
			s.cum = make([]float64, t)
			if k.train {
				s.col = make([]float64, t)
			}
		}
		k.setupCoPE(s, t)
		if !k.train && c.masked() && k.norm.masks() {
			k.setupMasked(s, hd)
			continue
		}
		if k.train {
			s.dq, s.dk, s.dv = make([]F, t*hd), make([]F, t*hd), make([]F, t*hd)
			s.s = make([]F, t*t)
			continue
		}
		// Evaluation holds one tile of scores, and the sequence's q, k and v: memory linear in t.
		s.q, s.k, s.v = make([]F, t*hd), make([]F, t*hd), make([]F, t*hd)
		s.s = make([]F, tileQueries*min(t, tileKeys))
		s.online()
	}
}

func convert[F float](x []float64) []F {
	y := make([]F, len(x))
	for i, v := range x {
		y[i] = F(v)
	}
	return y
}

func (k *attention[F]) forward(out *tensor.Dense, in []*tensor.Dense) error {
	c := k.cfg
	d := in[0].Shape()[1]
	k.copeEmbeddings(in)
	k.setup(d)
	o := Values[F](out)
	k.read(in)
	if err := k.checkIDValues(); err != nil {
		return err
	}
	t := c.SeqLen
	st := c.Stats
	if st != nil && len(st.ent) != c.Batch*c.Heads*t {
		st.ent, st.far, st.first = make([]float64, c.Batch*c.Heads*t), make([]float64, c.Batch*c.Heads*t), make([]float64, c.Batch*c.Heads*t)
	}
	switch {
	case k.train && c.Remap != nil:
		return errors.New("Attention: a remap is for evaluation only: the op cannot be differentiated with one")
	case k.train:
		k.forwardKept(o)
	case c.masked() && k.norm.masks():
		if err := k.forwardMasked(o); err != nil {
			return err
		}
	default:
		k.forwardTiled(o)
	}
	if st != nil {
		st.add(c.Batch, c.Heads, t)
	}
	return nil
}

// read points k.in at the values of a pass's inputs, as the config lays them out.
func (k *attention[F]) read(in []*tensor.Dense) {
	k.in = pass[F]{q: Values[F](in[0]), k: Values[F](in[1]), v: Values[F](in[2]), d: in[0].Shape()[1]}
	bi, si, fi := k.cfg.extra()
	if bi >= 0 {
		k.in.bias = Values[F](in[bi])
	}
	if si >= 0 {
		k.in.qscale = Values[F](in[si])
	}
	if fi >= 0 {
		k.in.logf = Values[F](in[fi])
	}
	if x := k.cfg.index("sink logits"); x >= 0 {
		k.in.sinks = Values[F](in[x])
	}
}

// forwardKept is the training forward pass: it keeps, per (sequence, head), the rotated q and
// k, v and the t×t probabilities for the backward pass.
func (k *attention[F]) forwardKept(o []F) {
	c := k.cfg
	q, kk, v, d := k.in.q, k.in.k, k.in.v, k.in.d
	t, hd := c.SeqLen, d/c.Heads
	scale := 1 / math.Sqrt(float64(hd))
	parallel(c.Batch*c.Heads, 4*t*t*hd, func(w, lo, hi int) {
		s := &k.scratch[w]
		for task := lo; task < hi; task++ {
			b, h := task/c.Heads, task%c.Heads
			off := task * t * hd
			qt, kt, vt := k.qr[off:off+t*hd], k.kr[off:off+t*hd], k.vv[off:off+t*hd]
			pt := k.p[task*t*t : (task+1)*t*t]
			s.ids = c.idsOf(b)
			k.gather(qt, q, b, h, d)
			k.rotate(qt, k.cos, k.sin, s.ids, false)
			k.gather(kt, kk, b, h, d)
			k.rotate(kt, k.kcos, k.ksin, s.ids, false)
			k.gather(vt, v, b, h, d)
			k.cumulate(s, b, h)
			if k.emb != nil {
				k.copeLogitsTri(s, qt, t, hd)
			}
			// Scores, then the stages and the normaliser over each row's keys up to the diagonal.
			gemmTri(asm.LowerC, false, true, t, t, hd, F(scale), qt, hd, kt, hd, 0, pt, t)
			k.norm.rows(pt, t, task, h, 0, t, s, true)
			gemmTri(asm.LowerA, false, false, t, hd, t, 1, pt, t, vt, hd, 0, s.o, hd)
			scatter(o, s.o, b, h, t, d, hd)
		}
	})
}

func (k *attention[F]) backward(din []*tensor.Dense, dout, _ *tensor.Dense, in []*tensor.Dense) error {
	c := k.cfg
	if !k.train || c.Bias == ByRow || c.Remap != nil {
		return errors.New("Attention: backward pass of an op that was not differentiated")
	}
	d := in[0].Shape()[1]
	k.copeEmbeddings(in)
	dy, dq, dk, dv := Values[F](dout), Values[F](din[0]), Values[F](din[1]), Values[F](din[2])
	t, hd := c.SeqLen, d/c.Heads
	scale := F(1 / math.Sqrt(float64(hd)))
	bi, si, fi := c.extra()
	var qscale, dlogf []F
	if si >= 0 {
		qscale = Values[F](in[si])
	}
	if fi >= 0 {
		dlogf = Values[F](din[fi])
	}
	parallel(c.Batch*c.Heads, 8*t*t*hd, func(w, lo, hi int) {
		s := &k.scratch[w]
		for task := lo; task < hi; task++ {
			b, h := task/c.Heads, task%c.Heads
			off := task * t * hd
			qt, kt, vt := k.qr[off:off+t*hd], k.kr[off:off+t*hd], k.vv[off:off+t*hd]
			pt := k.p[task*t*t : (task+1)*t*t]
			do := s.o
			k.gather(do, dy, b, h, d)
			gemmTri(asm.UpperA, true, false, t, hd, t, 1, pt, t, do, hd, 0, s.dv, hd) // dv = pᵀ·do
			ds := s.s
			gemmTri(asm.LowerC, false, true, t, t, hd, 1, do, hd, vt, hd, 0, ds, t) // dp = do·vᵀ
			clear(s.col)
			if k.emb != nil {
				// The normaliser's gradient unscaled, for copeBackward to scale and add the gates' part.
				k.copeLogitsTri(s, qt, t, hd)
				k.clearCoPEGrad(s)
				k.norm.backward(task, h, pt, ds, nil, 1, s.col)
				k.copeBackward(s, task, h, ds, qscale, scale)
			} else {
				k.norm.backward(task, h, pt, ds, qscale, scale, s.col)
			}
			if dlogf != nil {
				k.forgetGrad(dlogf, s.col, b, h)
			}
			gemmTri(asm.LowerA, false, false, t, hd, t, 1, ds, t, kt, hd, 0, s.dq, hd) // dq = ds·k
			gemmTri(asm.UpperA, true, false, t, hd, t, 1, ds, t, qt, hd, 0, s.dk, hd)  // dk = dsᵀ·q
			if k.emb != nil {
				k.copeGrad(s, task, qt, hd)
			}
			k.rotate(s.dq, k.cos, k.sin, c.PositionIDs, true)
			k.rotate(s.dk, k.kcos, k.ksin, c.PositionIDs, true)
			scatter(dq, s.dq, b, h, t, d, hd)
			scatter(dk, s.dk, b, h, t, d, hd)
			scatter(dv, s.dv, b, h, t, d, hd)
		}
	})
	if c.LearnBias {
		k.biasGrad(Values[F](din[bi]))
	}
	if c.LearnQueryScale {
		k.queryScaleGrad(Values[F](din[si]))
	}
	if ci := c.copeInput(); ci >= 0 {
		k.copeEmbeddingGrad(Values[F](din[ci]))
	}
	if x := c.index("sink logits"); x >= 0 {
		k.sinksGrad(Values[F](din[x]))
	}
	return nil
}

// online allocates the running sums of the tiled and masked evaluations, a row per query of a
// block.
func (s *attnScratch[F]) online() {
	s.max, s.sum, s.ent = make([]float64, tileQueries), make([]float64, tileQueries), make([]float64, tileQueries)
	s.far, s.first, s.rsum = make([]float64, tileQueries), make([]float64, tileQueries), make([]float64, tileQueries)
}
