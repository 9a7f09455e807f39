package nn

import (
	"math"

	"github.com/chewxy/hm"
	"github.com/pkg/errors"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	asm "extrapolate/internal/gemm"
)

// Positions is the rotation of q and k by position (RoPE) that attention applies, if any.
type Positions struct {
	// Cos and Sin hold, for position t and rotated pair p, the rotation's cosine and sine at
	// t*Pairs+p for t below the sequence length. They may carry a scale (YaRN's attention factor).
	Cos, Sin []float64
	// Pairs is the number of rotated pairs, at most half the head dimension; 0 means no rotation.
	Pairs int
	// Interleaved pairs dimensions (2p, 2p+1); otherwise (p, p+Pairs), as rotate_half does on
	// the rotated part: the first 2·Pairs dimensions of the head, the rest passing unrotated.
	Interleaved bool
	// KeyCos and KeySin, when set, rotate the keys in place of Cos and Sin: a rotation whose
	// scale differs between queries and keys (xPos).
	KeyCos, KeySin []float64
}

// BiasForm is the layout of attention's bias input.
type BiasForm int

const (
	// NoBias: attention takes no bias.
	NoBias BiasForm = iota
	// ByDistance: a (heads, seqLen) bias, [h][δ] added to the score of the key δ positions
	// before the query.
	ByDistance
	// PerQuery: a (heads, seqLen, seqLen) bias, [h][i][j] added to the score of query i for
	// key j ≤ i.
	PerQuery
	// ByRow: no bias input; AttentionConfig.BiasRow gives the bias of one query at a time, as
	// PerQuery's [h][i][j]. For evaluation only: it lets a per-query bias (FIRE's) be scored at
	// lengths whose heads·n² values would not fit in memory.
	ByRow
)

// input reports whether the bias form takes an input node.
func (f BiasForm) input() bool { return f == ByDistance || f == PerQuery }

// AttentionConfig describes a causal multi-head attention.
type AttentionConfig struct {
	Batch, SeqLen, Heads int
	Positions            Positions
	// Bias is the layout of the bias input; LearnBias makes it differentiable.
	Bias      BiasForm
	LearnBias bool
	// BiasRow, for the ByRow form, writes into dst the bias of query i in head h for keys j0,
	// j0+1, …, j0+len(dst)−1, all at most i. Workers call it at once, so it must be safe for
	// concurrent use.
	BiasRow func(h, i, j0 int, dst []float64)
	// QueryScale adds a (heads, seqLen) input whose [h][i] multiplies the scores of query i in
	// head h before the bias is added: an attention temperature (log-n scaling, Scalable-Softmax).
	// LearnQueryScale makes it differentiable.
	QueryScale, LearnQueryScale bool
	// Stats, when set, accumulates in every forward pass what each head's attention looks like
	// at each query position, from the probabilities the op computes anyway.
	Stats *AttentionStats
	// Window, when positive, lets query i see keys i−Window+1..i only (a sliding window), in
	// training and evaluation alike; 0, or a window as long as the sequence, lets it see every
	// earlier key. With a Remap, a query sees the keys of its spans that are also in its window.
	Window int
	// Remap, for evaluation only, lets each query see some keys only, some of them at alternate
	// positions; the op refuses to be differentiated with one.
	Remap *Remap
	// LogForget adds a (batch·seqLen, heads) input of log forget gates, row b·seqLen+t holding
	// each head's log f_t in sequence b (FoX; LogForget's output): the score of query i for key
	// j ≤ i gains Σ_{l=j+1..i} log f_l = c_i − c_j, with c the running sum of log f over the
	// sequence, after the scale and any other bias. The op computes c for each sequence and head,
	// in training and in evaluation alike, so memory stays linear in seqLen; the input is always
	// differentiable.
	LogForget bool
	// StickBreaking normalises each query's scores by stick-breaking in place of the softmax
	// (attention_stick.go): its weights sum to at most 1, the rest of the stick left
	// unattended. AttendCurrent lets query i attend to key i too; without it query i attends to
	// the keys before it only, and query 0 to none.
	StickBreaking, AttendCurrent bool
	// PositionIDs, when set, places token t of every sequence of the batch at position
	// PositionIDs[t] instead of t, for positions drawn in training (attention_ids.go): the
	// rotation and the bias then cover PositionRange positions, and the op looks them up at the
	// ids. The op reads the slice at every pass, so a caller draws new ids by writing into it.
	// In evaluation it may hold Batch·SeqLen ids instead, sequence b's at [b·SeqLen:], for ids
	// drawn for each window.
	PositionIDs   []int
	PositionRange int
	// CoPE adds a (layers, headDim, npos) input of position embeddings, of which layer CoPELayer
	// acts: contextual positions (attention_cope.go). Query i gives key j ≤ i the position
	// p_ij = min(Σ_{k=j..i} σ(s_ik), npos−1), s the scores q·k/√d before any scale or bias, and
	// its score gains q_i·e_p/√d, e_p interpolated between the columns ⌊p⌋ and ⌈p⌉ of the
	// layer's embeddings, shared by the heads, after the scale. The input is always
	// differentiable; a remap is refused.
	CoPE      bool
	CoPELayer int
}

// AttentionInputs are attention's inputs besides q, k and v, each nil unless the config asks
// for it: the bias (Bias), the query scale (QueryScale), the log forget gates (LogForget) and
// the position embeddings of contextual positions (CoPE).
type AttentionInputs struct {
	Bias, Scale, LogForget, CoPE *G.Node
}

// AttentionStats holds, summed over the sequences of every forward pass, the entropy of each
// head's attention distribution at each query position and the share of its mass on keys at
// least Far positions back: the quantities the log-n and Scalable-Softmax papers argue from
// (attention fading over more keys than training showed).
type AttentionStats struct {
	// Far is the distance from which a key counts as far: the training length.
	Far int
	// Entropy and FarMass hold, at h·n+i for a sequence length n, the sums over Sequences of
	// head h's entropy (in nats) and far mass at query i.
	Entropy, FarMass []float64
	Sequences        int

	ent, far []float64 // per (sequence, head, query), so that the sums do not depend on the split
}

// add sums one forward pass's per-sequence values, in order.
func (st *AttentionStats) add(batch, heads, n int) {
	if len(st.Entropy) != heads*n {
		st.Entropy, st.FarMass, st.Sequences = make([]float64, heads*n), make([]float64, heads*n), 0
	}
	for b := 0; b < batch; b++ {
		for i := range st.Entropy {
			st.Entropy[i] += st.ent[b*heads*n+i]
			st.FarMass[i] += st.far[b*heads*n+i]
		}
	}
	st.Sequences += batch
}

// rowStats is the entropy of a distribution p over keys 0..i and its mass on keys j ≤ i−far.
func rowStats[F float](p []F, far int) (entropy, farMass float64) {
	i := len(p) - 1
	for j, x := range p {
		if x <= 0 {
			continue
		}
		entropy -= float64(x) * math.Log(float64(x))
		if i-j >= far {
			farMass += float64(x)
		}
	}
	return entropy, farMass
}

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
	if (x.Bias == nil) == cfg.Bias.input() || (x.Scale == nil) == cfg.QueryScale || (cfg.BiasRow == nil) == (cfg.Bias == ByRow) ||
		(x.LogForget == nil) == cfg.LogForget || (x.CoPE == nil) == cfg.CoPE {
		return nil, errors.Errorf("Attention: bias %v, scale %v, log forget gates %v and position embeddings %v for bias form %d, query scale %v, forget gates %v and CoPE %v",
			x.Bias, x.Scale, x.LogForget, x.CoPE, cfg.Bias, cfg.QueryScale, cfg.LogForget, cfg.CoPE)
	}
	kr, err := byDtype(q, &attention[float32]{cfg: cfg}, &attention[float64]{cfg: cfg})
	if err != nil {
		return nil, err
	}
	in := []*G.Node{q, k, v}
	for _, n := range []*G.Node{x.Bias, x.Scale, x.LogForget, x.CoPE} {
		if n != nil {
			in = append(in, n)
		}
	}
	return apply(kr, in...)
}

// extra returns the indices of the bias, scale and log forget inputs, -1 for those absent.
func (c AttentionConfig) extra() (bias, scale, forget int) {
	bias, scale, forget = -1, -1, -1
	next := 3
	if c.Bias.input() {
		bias, next = next, next+1
	}
	if c.QueryScale {
		scale, next = next, next+1
	}
	if c.LogForget {
		forget = next
	}
	return bias, scale, forget
}

type attention[F float] struct {
	cfg AttentionConfig
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
	// sig keeps, for stick-breaking in training, the σ of each score, laid out as p.
	sig []F
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
	// exponentials times the score less the maximum (for the entropy), and sum over far keys.
	max, sum, ent, far []float64
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
}

func (k *attention[F]) String() string { return "Attention" }
func (k *attention[F]) signature() ([]hm.Type, hm.Type) {
	in := []hm.Type{floats(2), floats(2), floats(2)}
	switch k.cfg.Bias {
	case ByDistance:
		in = append(in, floats(2))
	case PerQuery:
		in = append(in, floats(3))
	}
	if k.cfg.QueryScale {
		in = append(in, floats(2))
	}
	if k.cfg.LogForget {
		in = append(in, floats(2))
	}
	if k.cfg.CoPE {
		in = append(in, floats(3))
	}
	return in, floats(2)
}
func (k *attention[F]) diffWRT() []bool {
	d := []bool{true, true, true}
	if k.cfg.Bias.input() {
		d = append(d, k.cfg.LearnBias)
	}
	if k.cfg.QueryScale {
		d = append(d, k.cfg.LearnQueryScale)
	}
	if k.cfg.LogForget {
		d = append(d, true)
	}
	if k.cfg.CoPE {
		d = append(d, true)
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
	if err := c.checkStick(); err != nil {
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
	return q.Clone(), nil
}

// setup converts the position tables and sizes the buffers, once.
func (k *attention[F]) setup(d int) {
	if k.scratch != nil {
		return
	}
	c := k.cfg
	p := c.Positions
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
		if !k.train && c.masked() && !c.StickBreaking {
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
		s.max, s.sum, s.ent, s.far = make([]float64, tileQueries), make([]float64, tileQueries), make([]float64, tileQueries), make([]float64, tileQueries)
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
	q, kk, v, o := Values[F](in[0]), Values[F](in[1]), Values[F](in[2]), Values[F](out)
	var bias, qscale, logf []F
	bi, si, fi := c.extra()
	if bi >= 0 {
		bias = Values[F](in[bi])
	}
	if si >= 0 {
		qscale = Values[F](in[si])
	}
	if err := k.checkIDValues(); err != nil {
		return err
	}
	if fi >= 0 {
		logf = Values[F](in[fi])
	}
	t := c.SeqLen
	st := c.Stats
	if st != nil && len(st.ent) != c.Batch*c.Heads*t {
		st.ent, st.far = make([]float64, c.Batch*c.Heads*t), make([]float64, c.Batch*c.Heads*t)
	}
	switch {
	case k.train && c.Remap != nil:
		return errors.New("Attention: a remap is for evaluation only: the op cannot be differentiated with one")
	case k.train:
		k.forwardKept(o, q, kk, v, bias, qscale, logf, d)
	case c.StickBreaking:
		k.forwardStick(o, q, kk, v, bias, qscale, logf, d)
	case c.masked():
		if err := k.forwardMasked(o, q, kk, v, bias, qscale, logf, d); err != nil {
			return err
		}
	default:
		k.forwardTiled(o, q, kk, v, bias, qscale, logf, d)
	}
	if st != nil {
		st.add(c.Batch, c.Heads, t)
	}
	return nil
}

// forwardKept is the training forward pass: it keeps, per (sequence, head), the rotated q and
// k, v and the t×t probabilities for the backward pass.
func (k *attention[F]) forwardKept(o, q, kk, v, bias, qscale, logf []F, d int) {
	c := k.cfg
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
			k.cumulate(s, logf, b, h)
			if k.emb != nil {
				k.copeLogitsTri(s, qt, t, hd)
			}
			// Scores, then a softmax over each row's keys up to the diagonal.
			gemmTri(asm.LowerC, false, true, t, t, hd, F(scale), qt, hd, kt, hd, 0, pt, t)
			if c.StickBreaking {
				k.stickRows(pt, t, task, h, 0, t, bias, qscale, s, k.sig[task*t*t:(task+1)*t*t], k.raw != nil)
			} else {
				k.softmaxRows(pt, t, task, h, 0, t, bias, qscale, s, k.raw != nil)
			}
			gemmTri(asm.LowerA, false, false, t, hd, t, 1, pt, t, vt, hd, 0, s.o, hd)
			scatter(o, s.o, b, h, t, d, hd)
		}
	})
}

// adjust applies query i's scale, contextual positions and bias, in head h, to row: its scores
// for keys j0, j0+1, …, all at most i; then its forget gates' bias, from the worker's s.cum.
func (k *attention[F]) adjust(row, bias, qscale []F, h, i, j0 int, s *attnScratch[F]) {
	t := k.cfg.SeqLen
	if k.emb != nil {
		k.copeRow(row, i, j0, s) // the gates read the scores as they are
	}
	if qscale != nil {
		m := qscale[h*t+i]
		for j := range row {
			row[j] *= m
		}
	}
	if k.emb != nil {
		for j, x := range s.cl[:len(row)] {
			row[j] += x
		}
	}
	if ids := s.ids; ids != nil && k.cfg.Bias != NoBias {
		k.adjustAt(row, bias, h, ids[i], ids[j0:j0+len(row)], s)
		return
	}
	switch k.cfg.Bias {
	case ByDistance:
		bh := bias[h*t : (h+1)*t]
		for j := range row {
			row[j] += bh[i-j0-j]
		}
	case PerQuery:
		bq := bias[(h*t+i)*t+j0:]
		for j := range row {
			row[j] += bq[j]
		}
	case ByRow:
		buf := s.biasRow[:len(row)]
		k.cfg.BiasRow(h, i, j0, buf)
		for j, x := range buf {
			row[j] += F(x)
		}
	}
	if k.cfg.LogForget {
		addForget(row, s.cum, i, j0)
	}
}

// softmaxRows turns the scores of queries i0..i1−1 of a (sequence, head) task, rows ld apart in
// p from query i0's, into probabilities over keys 0..i: each query's scale and bias, a softmax
// over its keys two rows at a time, and the attention measure's statistics. With keepRaw it
// first keeps each row's scores, for a learned query scale's gradient. With a window, the keys
// before it get probability 0 exactly, so that the backward pass, which multiplies by p, leaves
// them out as it leaves out future keys.
func (k *attention[F]) softmaxRows(p []F, ld, task, h, i0, i1 int, bias, qscale []F, s *attnScratch[F], keepRaw bool) {
	t, st := k.cfg.SeqLen, k.cfg.Stats
	for i := i0; i < i1; {
		n := min(2, i1-i) // rows i, and i+1 if there is one
		if w := k.cfg.Window; w > 0 && i+n > w {
			n = 1 // row i+1's window leaves out key 0: it is not row i plus a key, as softmaxPair has it
		}
		for r := i; r < i+n; r++ {
			lo := k.cfg.firstKey(r)
			row := p[(r-i0)*ld+lo : (r-i0)*ld+r+1]
			if keepRaw {
				copy(k.raw[(task*t+r)*t+lo:], row)
			}
			if k.gate != nil {
				s.g = k.gate[(task*t+r)*t+lo : (task*t+r)*t+r+1] // copeRow keeps the row's gates there
			}
			k.adjust(row, bias, qscale, h, r, lo, s)
		}
		if row := p[(i-i0)*ld : (i-i0+1)*ld]; n == 2 {
			softmaxPair(row, p[(i+1-i0)*ld:(i+2-i0)*ld], i+1)
		} else {
			lo := k.cfg.firstKey(i)
			clear(row[:lo])
			softmaxPrefix(row[lo:], i+1-lo)
		}
		for r := i; st != nil && r < i+n; r++ {
			st.ent[task*t+r], st.far[task*t+r] = rowStats(p[(r-i0)*ld:(r-i0)*ld+r+1], st.Far)
		}
		i += n
	}
}

// softmaxPrefix replaces row[:n] by its softmax and zeroes the rest (the future keys).
func softmaxPrefix[F float](row []F, n int) {
	mx := row[0]
	for _, x := range row[1:n] {
		if x > mx {
			mx = x
		}
	}
	inv := F(1 / expSum(row[:n], row[:n], mx))
	for j := range row[:n] {
		row[j] *= inv
	}
	clear(row[n:])
}

// softmaxPair is softmaxPrefix of a over its first n values and of b over its first n+1, a
// causal row and the next: the same values to the bit (TestSoftmaxPairIsPrefix), with the two
// rows' sums of exponentials, each a chain of additions, run side by side.
func softmaxPair[F float](a, b []F, n int) {
	ma, mb := a[0], b[0]
	for j, x := range a[1:n] {
		if x > ma {
			ma = x
		}
		if y := b[j+1]; y > mb {
			mb = y
		}
	}
	if b[n] > mb {
		mb = b[n]
	}
	expShiftRow(a[:n], ma)
	expShiftRow(b[:n+1], mb)
	var sa, sb float64
	for j, x := range a[:n] {
		sa += float64(x)
		sb += float64(b[j])
	}
	sb += float64(b[n])
	ia, ib := F(1/sa), F(1/sb)
	for j := range a[:n] {
		a[j] *= ia
		b[j] *= ib
	}
	b[n] *= ib
	clear(a[n:])
	clear(b[n+1:])
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
			if c.StickBreaking {
				k.stickBackward(task, h, pt, ds, k.sig[task*t*t:(task+1)*t*t], qscale, scale)
			} else if k.emb != nil {
				// The softmax's gradient unscaled, for copeBackward to scale and add the gates' part.
				k.copeLogitsTri(s, qt, t, hd)
				k.clearCoPEGrad(s)
				k.softmaxBackward(task, h, pt, ds, nil, 1, s.col)
				k.copeBackward(s, task, h, ds, qscale, scale)
			} else {
				k.softmaxBackward(task, h, pt, ds, qscale, scale, s.col)
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
	return nil
}

// softmaxBackward takes one (sequence, head) task's dp = do·vᵀ in ds through the softmax, row by
// row: ds = p·(dp - Σ p·dp), times the score scale (and the row's query scale, if any). The sums
// Σ p·dp, each a chain of additions, are taken two rows at a time, side by side. A non-nil col
// gets the column sums of ds before the scale, the gradient of the forget gates' bias.
func (k *attention[F]) softmaxBackward(task, h int, pt, ds, qscale []F, scale F, col []float64) {
	t := k.cfg.SeqLen
	i := 0
	for ; i+2 <= t; i += 2 {
		pa, da := pt[i*t:i*t+i+1], ds[i*t:(i+1)*t]
		pb, db := pt[(i+1)*t:(i+1)*t+i+2], ds[(i+1)*t:(i+2)*t]
		da, pb, db = da[:len(pa)], pb[:len(pa)+1], db[:len(pa)+1]
		var dotA, dotB float64
		for j, p := range pa {
			dotA += float64(p) * float64(da[j])
			dotB += float64(pb[j]) * float64(db[j])
		}
		dotB += float64(pb[i+1]) * float64(db[i+1])
		k.softmaxBackwardRow(task, h, i, pa, ds[i*t:(i+1)*t], dotA, qscale, scale, col)
		k.softmaxBackwardRow(task, h, i+1, pb, ds[(i+1)*t:(i+2)*t], dotB, qscale, scale, col)
	}
	if i < t {
		pr, dr := pt[i*t:i*t+i+1], ds[i*t:(i+1)*t]
		var dot float64
		for j, p := range pr {
			dot += float64(p) * float64(dr[j])
		}
		k.softmaxBackwardRow(task, h, i, pr, dr, dot, qscale, scale, col)
	}
}

// softmaxBackwardRow is softmaxBackward's row i, given its sum dot = Σ p·dp over its probabilities
// pr. A learned bias's gradient is ds before the scale: it replaces p, which the step no longer
// needs. With a learned query scale it keeps the row's Σ ds·raw score for queryScaleGrad; with
// forget gates it adds the row's ds into their column sums col.
func (k *attention[F]) softmaxBackwardRow(task, h, i int, pr, dr []F, dot float64, qscale []F, scale F, col []float64) {
	t := k.cfg.SeqLen
	rowScale := scale
	if qscale != nil {
		rowScale = qscale[h*t+i] * scale
	}
	var sg float64
	for j, p := range pr {
		g := F(float64(p) * (float64(dr[j]) - dot))
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
	clear(dr[i+1:])
}

// queryScaleGrad writes the learned query scale's gradient, each (head, position)'s sums summed
// over the sequences in order, as the bias's gradient is.
func (k *attention[F]) queryScaleGrad(ds []F) {
	c := k.cfg
	t := c.SeqLen
	for h := 0; h < c.Heads; h++ {
		for i := 0; i < t; i++ {
			var sum float64
			for b := 0; b < c.Batch; b++ {
				sum += k.scaleGrad[(b*c.Heads+h)*t+i]
			}
			ds[h*t+i] = F(sum)
		}
	}
}

// biasGrad sums the bias's gradient, which the backward pass left in k.p for each (sequence,
// head), over the sequences, and for a bias by distance over the queries: in a fixed order, so
// the sum is the same whatever the number of workers.
func (k *attention[F]) biasGrad(db []F) {
	c := k.cfg
	t := c.SeqLen
	if k.biasAcc == nil {
		k.biasAcc = make([][]float64, c.Heads)
		for h := range k.biasAcc {
			k.biasAcc[h] = make([]float64, t*t)
		}
		if c.PositionIDs != nil && c.Bias == ByDistance {
			k.distAcc = make([][]float64, c.Heads)
			for h := range k.distAcc {
				k.distAcc[h] = make([]float64, c.PositionRange)
			}
		}
	}
	parallel(c.Heads, c.Batch*t*t, func(_, lo, hi int) {
		for h := lo; h < hi; h++ {
			acc := k.biasAcc[h]
			clear(acc)
			for b := 0; b < c.Batch; b++ {
				g := k.p[(b*c.Heads+h)*t*t : (b*c.Heads+h+1)*t*t]
				for i := 0; i < t; i++ {
					for j := 0; j <= i; j++ {
						acc[i*t+j] += float64(g[i*t+j])
					}
				}
			}
			if c.PositionIDs != nil {
				k.biasGradAt(db, acc, h)
				continue
			}
			if c.Bias == PerQuery {
				for x, v := range acc {
					db[h*t*t+x] = F(v)
				}
				continue
			}
			for δ := 0; δ < t; δ++ {
				var sum float64
				for i := δ; i < t; i++ {
					sum += acc[i*t+i-δ]
				}
				db[h*t+δ] = F(sum)
			}
		}
	})
}

// gather copies head h of sequence b from x (rows of width d) into dst (t, hd).
func (k *attention[F]) gather(dst, x []F, b, h, d int) {
	t := k.cfg.SeqLen
	hd := len(dst) / t
	for i := 0; i < t; i++ {
		copy(dst[i*hd:(i+1)*hd], x[(b*t+i)*d+h*hd:])
	}
}

// rotate applies the rotation with tables cs and sn to each row of x (t, hd) in place, or its
// transpose (the inverse rotation, scaled alike) when inverse is set: row i at its position, i
// or its id, ids[i], for ids not nil.
func (k *attention[F]) rotate(x, cs, sn []F, ids []int, inverse bool) {
	p := k.cfg.Positions
	if p.Pairs == 0 {
		return
	}
	t := k.cfg.SeqLen
	hd := len(x) / t
	for i := 0; i < t; i++ {
		row := x[i*hd : (i+1)*hd]
		at := i
		if ids != nil {
			at = ids[i]
		}
		c, s := cs[at*p.Pairs:(at+1)*p.Pairs], sn[at*p.Pairs:(at+1)*p.Pairs]
		for j := 0; j < p.Pairs; j++ {
			a, b := j, j+p.Pairs
			if p.Interleaved {
				a, b = 2*j, 2*j+1
			}
			cj, sj := c[j], s[j]
			if inverse {
				sj = -sj
			}
			x0, x1 := row[a], row[b]
			row[a] = x0*cj - x1*sj
			row[b] = x1*cj + x0*sj
		}
	}
}

// scatter writes src (t, hd) into head h of sequence b of dst (rows of width d).
func scatter[F float](dst, src []F, b, h, t, d, hd int) {
	for i := 0; i < t; i++ {
		copy(dst[(b*t+i)*d+h*hd:(b*t+i)*d+(h+1)*hd], src[i*hd:(i+1)*hd])
	}
}
