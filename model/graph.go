package model

import (
	"fmt"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"extrapolate/model/nn"
	"extrapolate/model/nn/stock"
	"extrapolate/position"
)

// Graph is the model unrolled for batches of Batch sequences of Len tokens. It is built once and
// run for every batch of that shape: fill IDs and Targets, then Run.
type Graph struct {
	Batch, Len int
	Train      bool
	// IDs and Targets are the graph's inputs, written in place before each run.
	IDs, Targets []int
	// Positions, in a graph built with Options.PositionRange, places token t of every sequence
	// at position Positions[t], or in an evaluation graph token t of sequence b at
	// Positions[b·Len+t]: an input too, written in place before a run (0..Len−1 until then),
	// increasing strictly along a sequence and below the range. Nil in a graph without.
	Positions []int

	g      *G.ExprGraph
	vm     G.VM
	loss   *G.Node
	logits *G.Node
	grads  G.Nodes // one per model parameter, when Train
	onehot *tensor.Dense
	// Stats holds, with Options.AttentionStats, each layer's attention statistics, summed over
	// every run of the graph.
	Stats []*nn.AttentionStats
	// layers holds each layer's nodes of what its attention reads (LayerInputs); nil in a graph
	// of stock ops.
	layers []layerNodes
}

// Options choose how a graph is built.
type Options struct {
	// Train adds the backward pass.
	Train bool
	// StockOps builds the graph from gorgonia's stock ops instead of the fused ones: the reference
	// in tests, and the baseline of the speed comparison.
	StockOps bool
	// AttentionStats collects each layer's attention entropy and mass on keys farther back than
	// the training length, by head and query position (Graph.Stats); fused ops only.
	AttentionStats bool
	// PositionRange, when positive, builds a graph whose tokens sit at positions drawn from
	// [0, PositionRange) (Graph.Positions, positionids.go); 0 places token t at t.
	PositionRange int
}

// Graph builds the model for batches of batch sequences of n tokens, with the scheme's
// position information for n positions. A scheme that cannot handle n positions gives an error
// for which IsNotApplicable is true.
func (m *Model) Graph(scheme position.Scheme, batch, n int, o Options) (*Graph, error) {
	if batch <= 0 || n <= 0 {
		return nil, fmt.Errorf("model: graph of %d sequences of %d tokens", batch, n)
	}
	gr := &Graph{Batch: batch, Len: n, Train: o.Train, g: G.NewGraph()}
	gr.IDs, gr.Targets = make([]int, batch*n), make([]int, batch*n)
	if err := gr.takePositions(o); err != nil {
		return nil, err
	}
	g := gr.g
	ids := G.NewVector(g, tensor.Int, G.WithShape(batch*n), G.WithName("ids"), G.WithValue(tensor.New(tensor.WithShape(batch*n), tensor.WithBacking(gr.IDs))))
	targets := G.NewVector(g, tensor.Int, G.WithShape(batch*n), G.WithName("targets"), G.WithValue(tensor.New(tensor.WithShape(batch*n), tensor.WithBacking(gr.Targets))))
	w := nodes{}
	var wrt G.Nodes
	for _, p := range m.Params {
		node := G.NewTensor(g, m.Dtype, p.Value.Dims(), G.WithShape(p.Value.Shape()...), G.WithName(p.Name), G.WithValue(p.Value))
		w[p] = node
		wrt = append(wrt, node)
	}
	pos, err := m.positions(g, scheme, w, batch, n, o, gr.Positions)
	if err != nil {
		return nil, err
	}
	if o.AttentionStats {
		if o.StockOps {
			return nil, fmt.Errorf("model: attention statistics come from the fused attention op, not the stock ops")
		}
		if m.Config.TrainLen <= 0 {
			return nil, fmt.Errorf("model: attention statistics need the training length, to tell far keys")
		}
		for l := range pos.layers {
			if pos.layers[l].decomposed() {
				return nil, fmt.Errorf("model: attention statistics (eval.measures attention, sinks) come from the fused attention op, and layer %d runs a stage of its scheme's on the stock ops", l)
			}
			st := &nn.AttentionStats{Far: m.Config.TrainLen}
			pos.layers[l].config.Stats = st
			gr.Stats = append(gr.Stats, st)
		}
	}
	b := &builder{ops: fused}
	if o.StockOps {
		b.ops = gr.stock(m, batch*n)
	}
	gr.logits = b.forward(m, w, ids, pos)
	gr.loss = b.crossEntropy(gr.logits, targets)
	if b.err != nil {
		return nil, fmt.Errorf("model: building the graph: %w", b.err)
	}
	if !o.StockOps {
		gr.layers = b.layers
	}
	if o.Train {
		if gr.grads, err = G.Grad(gr.loss, wrt...); err != nil {
			return nil, fmt.Errorf("model: differentiating the graph: %w", err)
		}
	}
	gr.vm = G.NewTapeMachine(g)
	return gr, nil
}

// nodes are the graph's nodes of the model's weights.
type nodes map[*Param]*G.Node

// forward is the whole model up to the logits, as a reader would write it down.
func (b *builder) forward(m *Model, w nodes, ids *G.Node, pos positions) *G.Node {
	x := b.embed(ids, w[m.wte], pos.table, pos.n, pos.learnedTable, pos.at)
	for l, h := range m.h {
		a := pos.layers[l]
		y := b.layerNorm(x, w[h.ln1G], w[h.ln1B])
		q := b.linear(y, w[h.wq], w[h.bq])
		k := b.linear(y, w[h.wk], w[h.bk])
		v := b.linear(y, w[h.wv], w[h.bv])
		f := b.logForget(y, a.gate) // nil for a layer without forget gates
		b.layers = append(b.layers, layerNodes{x: y, q: q, k: k, logForget: f, scale: a.scale})
		in := nn.AttentionInputs{Bias: a.bias, Scale: a.scale, LogForget: f, CoPE: a.cope, Scores: a.scores, Weights: a.weights}
		if h.sinks != nil {
			in.Sinks = w[h.sinks]
		}
		att := b.attention(q, k, v, in, a.config)
		if h.wg != nil {
			att = b.gate(att, y, w[h.wg], w[h.bg], m.Config.Heads)
		}
		x = b.add(x, b.linear(att, w[h.wo], w[h.bo]))
		y = b.layerNorm(x, w[h.ln2G], w[h.ln2B])
		x = b.add(x, b.linear(b.gelu(b.linear(y, w[h.w1], w[h.b1])), w[h.w2], w[h.b2]))
	}
	return b.linear(b.layerNorm(x, w[m.lnfG], w[m.lnfB]), w[m.whead], w[m.bhead])
}

// Run computes the mean loss over the batch in IDs and Targets and, for a training graph, the
// gradients. A negative target (task.NoTarget) carries no loss: the mean is over the others.
func (gr *Graph) Run() (float64, error) {
	if gr.onehot != nil {
		oneHot(gr.onehot, gr.Targets)
	}
	gr.vm.Reset()
	if err := gr.vm.RunAll(); err != nil {
		return 0, fmt.Errorf("model: running the graph: %w", err)
	}
	return scalarOf(gr.loss.Value())
}

// Grad returns the gradient of the last run's loss with respect to the i-th model parameter.
func (gr *Graph) Grad(i int) *tensor.Dense {
	return gr.grads[i].Value().(*tensor.Dense)
}

// Logits returns the last run's logits, (Batch·Len, vocab), valid until the next run.
func (gr *Graph) Logits() *tensor.Dense { return gr.logits.Value().(*tensor.Dense) }

// Close releases the graph's machine.
func (gr *Graph) Close() error { return gr.vm.Close() }

func scalarOf(v G.Value) (float64, error) {
	switch x := v.(type) {
	case *G.F32:
		return float64(*x), nil
	case *G.F64:
		return float64(*x), nil
	case *tensor.Dense:
		switch d := x.Data().(type) {
		case float32:
			return float64(d), nil
		case float64:
			return d, nil
		case []float32:
			return float64(d[0]), nil
		case []float64:
			return d[0], nil
		}
	}
	return 0, fmt.Errorf("model: loss is %T, not a scalar", v)
}

// oneHot fills the stock graph's one-hot targets. A row without a target (a negative one) is
// left zero, and the others weigh rows/scored, so that the stock cross-entropy's mean over all
// rows is the mean over the scored ones, as the fused op's is; with every row scored the weight
// is exactly 1.
func oneHot(t *tensor.Dense, targets []int) {
	v := t.Shape()[1]
	scored := 0
	for _, x := range targets {
		if x >= 0 {
			scored++
		}
	}
	w := float64(len(targets)) / float64(max(scored, 1))
	switch d := t.Data().(type) {
	case []float32:
		fillOneHot(d, targets, v, float32(w))
	case []float64:
		fillOneHot(d, targets, v, w)
	}
}

func fillOneHot[F float32 | float64](d []F, targets []int, v int, w F) {
	clear(d)
	for r, x := range targets {
		if x >= 0 {
			d[r*v+x] = w
		}
	}
}

// positions is a scheme's contribution at one length, as graph nodes and attention settings.
type positions struct {
	n int
	// at places the tokens at drawn positions (Graph.Positions), nil at 0..n−1.
	at []int
	// table is added to the embeddings; learnedTable says it is computed from weights.
	table        *G.Node
	learnedTable bool
	layers       []layerPositions
}

// layerPositions is what one layer's attention takes: its settings, its bias and scale nodes or
// nil, the weights of its forget gates or nil, and its contextual positions' embeddings, whole
// (the config says which layer of them acts), or nil.
type layerPositions struct {
	config      nn.AttentionConfig
	bias, scale *G.Node
	gate        *gateNodes
	cope        *G.Node
	// scores is the scheme's own score stage (position.GraphScorer) and weights its own
	// normaliser (position.GraphNormaliser), each nil for none: with either, the layer's
	// attention runs on the stock ops.
	scores  func(*G.Node) (*G.Node, error)
	weights func(scores, seen *G.Node) (*G.Node, error)
}

// decomposed says whether the layer's attention has a stage with no fused kernel.
func (a layerPositions) decomposed() bool { return a.scores != nil || a.weights != nil }

// gateNodes are the nodes of a scheme's forget gate weights (position.ForgetGate), whole, and
// the layer of them that acts.
type gateNodes struct {
	w, b  *G.Node
	layer int
}

// positions asks the scheme what it adds at n positions, through the position package's adapter
// over its optional interfaces, and makes graph nodes of it: constants for fixed numbers, and for
// numbers computed from weights, nodes that compute them (nn.Compute) so that their gradient
// reaches the weights. A position.PerLayer scheme is asked for each layer's scheme, which acts in
// that layer only. Each layer's sliding window applies in every graph; the scheme's distance map
// in evaluation graphs only (a fine-tuning graph, built with the evaluation scheme, trains
// without it), as the protocol applies maps when evaluating. With position ids at, the table,
// the rotation and the bias are made for opt.PositionRange positions, and looked up at the ids;
// the temperature counts tokens, so its factors stay those of n.
func (m *Model) positions(g *G.ExprGraph, s position.Scheme, w nodes, batch, n int, opt Options, at []int) (positions, error) {
	p := positions{n: n, at: at}
	r := n // the positions the scheme's pieces cover
	if at != nil {
		r = opt.PositionRange
	}
	var err error
	if p.table, p.learnedTable, err = m.table(g, s, w, r); err != nil {
		return p, err
	}
	scale, learnedScale, err := m.queryScale(g, w, n)
	if err != nil {
		return p, err
	}
	var shared *G.Node // a fixed bias, made once for every layer of the scheme that gives it
	for l := 0; l < m.Config.Layers; l++ {
		in := position.InLayer(s, l)
		a := layerPositions{config: nn.AttentionConfig{Batch: batch, SeqLen: n, Heads: m.Config.Heads}}
		if at != nil {
			a.config.PositionIDs, a.config.PositionRange = at, r
		}
		rot, err := position.RotationAt(in.Scheme, r)
		if err != nil {
			return p, err
		}
		if rot != nil {
			a.config.Positions = nn.Positions{Pairs: len(rot.InvFreq), Interleaved: rot.Interleaved, Cos: rot.Cos, Sin: rot.Sin, KeyCos: rot.KeyCos, KeySin: rot.KeySin}
		}
		form, err := position.BiasForm(in.Scheme)
		switch {
		case err != nil:
			return p, err
		case form == position.Fixed && shared != nil && !position.IsPerLayer(s):
			a.bias = shared
		case form == position.FromWeights && !opt.Train && !opt.StockOps && BiasByRow(in.Scheme, m.Config.Heads, r):
			// A long evaluation computes this bias a query at a time, inside attention.
			a.config.Bias, a.config.BiasRow = nn.ByRow, position.BiasRows(in.Scheme, m.SchemeWeights(in.Owner), in.Layer)
		case form != position.Absent:
			if a.bias, err = m.bias(g, s, in, form, w, l, r); err != nil {
				return p, err
			}
			if form == position.Fixed {
				shared = a.bias
			}
		}
		if a.bias != nil {
			a.config.Bias, a.config.LearnBias = biasForm(a.bias), form == position.FromWeights
		}
		if a.gate, err = m.forgetGate(in, w); err != nil {
			return p, err
		}
		a.config.LogForget = a.gate != nil
		if sb, ok := position.StickBreakingOf(in.Scheme); ok {
			a.config.StickBreaking, a.config.AttendCurrent = true, sb.AttendCurrent
		}
		a.config.Softpick = m.Config.Attention.Normaliser == Softpick
		a.config.Sinks = m.Config.Attention.Sinks
		if a.cope, a.config.CoPELayer, err = m.contextPositions(in, w); err != nil {
			return p, err
		}
		a.config.CoPE = a.cope != nil
		a.config.Window = position.WindowOf(in.Scheme)
		if err := m.decompose(&a, in, g, w, n, at != nil); err != nil {
			return p, err
		}
		if dm := position.DistanceMapOf(s); dm != nil && !opt.Train {
			if at != nil {
				return p, errMapAtIDs(dm)
			}
			if opt.StockOps {
				return p, fmt.Errorf("model: the %s distance map is applied by the fused attention op, not the stock ops", dm.Name())
			}
			if a.config.Remap, err = remap(dm, rot, a.config.Bias, n); err != nil {
				return p, err
			}
		}
		if scale != nil {
			if a.scale, err = scale(l); err != nil {
				return p, err
			}
			a.config.QueryScale, a.config.LearnQueryScale = true, learnedScale
		}
		p.layers = append(p.layers, a)
	}
	return p, nil
}

// queryScale returns what makes the node of layer l's factors on the queries' scores at n
// positions, nil for a model without a temperature, and whether they are computed from weights:
// fixed factors are one constant for every layer, learned ones a node per layer computing them
// from the layer's weights.
func (m *Model) queryScale(g *G.ExprGraph, w nodes, n int) (func(l int) (*G.Node, error), bool, error) {
	t, heads := m.temperature, m.Config.Heads
	form, err := position.QueryScaleForm(t)
	if err != nil || form == position.Absent {
		return nil, false, err
	}
	if form == position.FromWeights {
		return func(l int) (*G.Node, error) {
			var in []*G.Node
			for _, p := range m.h[l].temperature {
				in = append(in, w[p])
			}
			return nn.Compute(fmt.Sprintf("QueryScale%d", l), queryScaleOf{t, n}, tensor.Shape{heads, n}, in...)
		}, true, nil
	}
	v, err := position.QueryScaleAt(t, nil, n)
	if err != nil {
		return nil, false, err
	}
	if len(v) != heads*n {
		return nil, false, fmt.Errorf("model: the %s temperature's %d factors do not fit %d heads and %d positions", t.Name(), len(v), heads, n)
	}
	node := constant(g, m.Dtype, "query_scale", v, heads, n)
	return func(int) (*G.Node, error) { return node, nil }, false, nil
}

// table makes the node of the table the scheme adds to the embeddings at n positions, nil for
// none, and says whether it is computed from the scheme's weights.
func (m *Model) table(g *G.ExprGraph, s position.Scheme, w nodes, n int) (*G.Node, bool, error) {
	form, err := position.TableForm(s)
	if err != nil || form == position.Absent {
		return nil, false, err
	}
	d := m.Config.DModel
	t, err := position.TableAt(s, m.SchemeWeights(0), n)
	if err != nil {
		return nil, false, err
	}
	if t.Cols != d || t.Rows < n || len(t.Values) < n*d {
		return nil, false, fmt.Errorf("model: the %s scheme's position table %dx%d does not fit %d positions of width %d", s.Name(), t.Rows, t.Cols, n, d)
	}
	if form == position.Fixed {
		return constant(g, m.Dtype, "pe", t.Values[:n*d], n, d), false, nil
	}
	node, err := nn.Compute("PositionTable", tableOf{s, n, d}, tensor.Shape{n, d}, m.schemeNodes(0, w)...)
	return node, true, err
}

// bias makes the node of the bias of the given form that in's scheme adds in layer l at n
// positions: a constant for a fixed bias, a node computing a learned one from its owner's weights.
func (m *Model) bias(g *G.ExprGraph, s position.Scheme, in position.Slot, form position.Form, w nodes, l, n int) (*G.Node, error) {
	if node, err := m.graphBias(g, in, w, n); node != nil || err != nil {
		return node, err
	}
	b, err := position.BiasAt(in.Scheme, m.SchemeWeights(in.Owner), in.Layer, n)
	if err != nil {
		return nil, err
	}
	if err := m.checkBias(in.Scheme, b, n); err != nil {
		return nil, err
	}
	shape := biasShape(b, m.Config.Heads, n)
	if form == position.Fixed {
		return constant(g, m.Dtype, "bias"+ownerPrefix(s, in.Owner), b.Values, shape...), nil
	}
	return nn.Compute(fmt.Sprintf("PositionBias%d", l), biasOf{in.Scheme, in.Layer, n}, shape, m.schemeNodes(in.Owner, w)...)
}

// graphBias builds, for a scheme that gives its bias as a graph (position.GraphBiaser), the
// node of in's bias at n positions in the model's graph from its weights' nodes, so that
// gorgonia's autodiff takes the gradient to them; nil for any other scheme.
func (m *Model) graphBias(g *G.ExprGraph, in position.Slot, w nodes, n int) (*G.Node, error) {
	node, err := position.BiasGraph(in.Scheme, g, m.schemeNodes(in.Owner, w), in.Layer, n)
	if node == nil || err != nil {
		return nil, err
	}
	heads := m.Config.Heads
	if sh := node.Shape(); node.Dtype() != m.Dtype || !sh.Eq(tensor.Shape{heads, n}) && !sh.Eq(tensor.Shape{heads, n, n}) {
		return nil, fmt.Errorf("model: the %s scheme's graph bias is %v of shape %v, want %v of shape (%d, %d) or (%d, %d, %d)", in.Scheme.Name(), node.Dtype(), sh, m.Dtype, heads, n, heads, n, n)
	}
	return node, nil
}

// decompose sets a's stages of in's scheme with no fused kernel (position.GraphScorer,
// GraphNormaliser), which put the layer on the stock ops; drawn position ids (atIDs), and a
// normaliser of the scheme's beside one the config names, are refused.
func (m *Model) decompose(a *layerPositions, in position.Slot, g *G.ExprGraph, w nodes, n int, atIDs bool) error {
	ws, heads := m.schemeNodes(in.Owner, w), m.Config.Heads
	a.scores = position.ScoresGraph(in.Scheme, g, ws, in.Layer, heads, n)
	a.weights = position.WeightsGraph(in.Scheme, g, ws, in.Layer, heads, n)
	name := in.Scheme.Name()
	switch {
	case a.decomposed() && atIDs:
		return fmt.Errorf("model: the %s scheme changes attention on the stock ops, which take no drawn position ids", name)
	case a.weights != nil && (a.config.StickBreaking || a.config.Softpick || a.config.Sinks):
		return fmt.Errorf("model: the %s scheme has a normaliser of its own, which replaces the softmax: attention.normaliser and attention.sinks must be left unset", name)
	}
	return nil
}

// forgetGate returns the nodes of the forget gate in's scheme has (position.ForgetGater), nil
// for none, having checked their shapes: (layers, d_model, heads) and (layers, heads), with the
// slot's layer among them.
func (m *Model) forgetGate(in position.Slot, w nodes) (*gateNodes, error) {
	g, ok := position.ForgetGateOf(in.Scheme)
	if !ok {
		return nil, nil
	}
	ws := m.schemeNodes(in.Owner, w)
	if g.Weight < 0 || g.Weight >= len(ws) || g.Bias < 0 || g.Bias >= len(ws) {
		return nil, fmt.Errorf("model: the %s scheme's forget gate names weights %d and %d of %d", in.Scheme.Name(), g.Weight, g.Bias, len(ws))
	}
	gw, gb := ws[g.Weight], ws[g.Bias]
	c := m.Config
	if s := gw.Shape(); len(s) != 3 || s[1] != c.DModel || s[2] != c.Heads || in.Layer >= s[0] || !gb.Shape().Eq(tensor.Shape{s[0], c.Heads}) {
		return nil, fmt.Errorf("model: the %s scheme's forget gate of shapes %v and %v does not fit layer %d of width %d and %d heads", in.Scheme.Name(), gw.Shape(), gb.Shape(), in.Layer, c.DModel, c.Heads)
	}
	return &gateNodes{w: gw, b: gb, layer: in.Layer}, nil
}

// contextPositions returns the node of the position embeddings in's scheme has
// (position.ContextPositioner), nil for none, and the layer of them that acts, having checked
// their shape: (layers, head_dim, npos), with the slot's layer among them.
func (m *Model) contextPositions(in position.Slot, w nodes) (*G.Node, int, error) {
	cp, ok := position.ContextPositionsOf(in.Scheme)
	if !ok {
		return nil, 0, nil
	}
	ws := m.schemeNodes(in.Owner, w)
	if cp.Embedding < 0 || cp.Embedding >= len(ws) {
		return nil, 0, fmt.Errorf("model: the %s scheme's position embeddings are weight %d of %d", in.Scheme.Name(), cp.Embedding, len(ws))
	}
	e, c := ws[cp.Embedding], m.Config
	if s := e.Shape(); len(s) != 3 || s[1] != c.DModel/c.Heads || s[2] < 1 || in.Layer >= s[0] {
		return nil, 0, fmt.Errorf("model: the %s scheme's position embeddings of shape %v do not fit layer %d with heads of %d", in.Scheme.Name(), e.Shape(), in.Layer, c.DModel/c.Heads)
	}
	return e, in.Layer, nil
}

// schemeNodes returns the graph nodes of a scheme's weights: the whole model's scheme's for
// owner 0, or layer l's scheme's for owner l of a position.PerLayer scheme.
func (m *Model) schemeNodes(owner int, w nodes) []*G.Node {
	var out []*G.Node
	if owner < len(m.schemes) {
		for _, p := range m.schemes[owner] {
			out = append(out, w[p])
		}
	}
	return out
}

func (m *Model) checkBias(s position.Scheme, b *position.Bias, n int) error {
	heads := m.Config.Heads
	size := heads * n
	if b.PerQuery {
		size *= n
	}
	if b.Heads != heads || b.Len != n || len(b.Values) != size {
		return fmt.Errorf("model: the %s scheme's bias for %d heads and %d positions does not fit %d heads and %d positions", s.Name(), b.Heads, b.Len, heads, n)
	}
	return nil
}

func biasShape(b *position.Bias, heads, n int) tensor.Shape {
	if b.PerQuery {
		return tensor.Shape{heads, n, n}
	}
	return tensor.Shape{heads, n}
}

func biasForm(node *G.Node) nn.BiasForm {
	if node.Dims() == 3 {
		return nn.PerQuery
	}
	return nn.ByDistance
}

func float64s(t *tensor.Dense) []float64 {
	switch x := t.Data().(type) {
	case []float64:
		return append([]float64(nil), x...)
	case []float32:
		y := make([]float64, len(x))
		for i, v := range x {
			y[i] = float64(v)
		}
		return y
	}
	return nil
}

// constant is a constant node of the model's dtype holding v.
func constant(g *G.ExprGraph, dt tensor.Dtype, name string, v []float64, shape ...int) *G.Node {
	return position.GraphConstant(g, dt, name, v, shape...)
}

// tableOf computes a learned position table from the scheme's weights.
type tableOf struct {
	s    position.Scheme
	n, d int
}

func (t tableOf) Forward(in [][]float64, out []float64) error {
	tab, err := position.TableAt(t.s, in, t.n)
	if err != nil {
		return err
	}
	copy(out, tab.Values[:t.n*t.d])
	return nil
}

func (t tableOf) Backward(in [][]float64, dout []float64, din [][]float64) {
	position.TableGrad(t.s, in, t.n, dout, din)
}

// BiasRowsAbove is the number of values (heads·n²) of a per-query bias above which evaluation
// computes it a query at a time inside attention rather than hold it whole: at 4 heads, the
// lengths above 2048. The values are the same either way; below it, computing them once for
// every sequence of a batch is faster.
const BiasRowsAbove = 1 << 24

// BiasByRow reports whether an evaluation graph of a model with heads heads computes the bias of
// the scheme s at n positions a query at a time.
func BiasByRow(s position.Scheme, heads, n int) bool {
	return position.HasBiasRows(s) && int64(heads)*int64(n)*int64(n) > BiasRowsAbove
}

// biasOf computes one layer's learned bias from the scheme's weights.
type biasOf struct {
	s        position.Scheme
	layer, n int
}

func (b biasOf) Forward(in [][]float64, out []float64) error {
	bias, err := position.BiasAt(b.s, in, b.layer, b.n)
	if err != nil {
		return err
	}
	copy(out, bias.Values)
	return nil
}

func (b biasOf) Backward(in [][]float64, dout []float64, din [][]float64) {
	position.BiasGrad(b.s, in, b.layer, b.n, dout, din)
}

// ops are the layers the forward pass is made of: the fused ones below, or gorgonia's stock ones
// (stock.go), the reference for tests and the bench.
type ops struct {
	embed        func(ids, wte, pe *G.Node, seqLen int, learned bool, at []int) (*G.Node, error)
	layerNorm    func(x, g, b *G.Node) (*G.Node, error)
	linear       func(x, w, b *G.Node) (*G.Node, error)
	attention    func(q, k, v *G.Node, in nn.AttentionInputs, c nn.AttentionConfig) (*G.Node, error)
	logForget    func(x, w, b *G.Node, layer int) (*G.Node, error)
	gelu         func(x *G.Node) (*G.Node, error)
	add          func(a, b *G.Node) (*G.Node, error)
	crossEntropy func(logits, targets *G.Node) (*G.Node, error)
}

var fused = ops{
	embed:        nn.EmbedAt,
	layerNorm:    func(x, g, b *G.Node) (*G.Node, error) { return nn.LayerNorm(x, g, b, LayerNormEps) },
	linear:       nn.Linear,
	attention:    nn.AttentionWith,
	logForget:    nn.LogForget,
	gelu:         nn.GELU,
	add:          nn.Add,
	crossEntropy: nn.CrossEntropy,
}

// builder applies ops, keeping the first error so the forward pass reads as one expression per
// line; once an op fails, the rest return nil and are not built.
type builder struct {
	ops ops
	err error
	// layers are the nodes each layer's attention reads, in order, for Graph.LayerInputs.
	layers []layerNodes
}

func (b *builder) do(f func() (*G.Node, error)) *G.Node {
	if b.err != nil {
		return nil
	}
	n, err := f()
	b.err = err
	return n
}

func (b *builder) embed(ids, wte, pe *G.Node, n int, learned bool, at []int) *G.Node {
	return b.do(func() (*G.Node, error) { return b.ops.embed(ids, wte, pe, n, learned, at) })
}
func (b *builder) layerNorm(x, g, bias *G.Node) *G.Node {
	return b.do(func() (*G.Node, error) { return b.ops.layerNorm(x, g, bias) })
}
func (b *builder) linear(x, w, bias *G.Node) *G.Node {
	return b.do(func() (*G.Node, error) { return b.ops.linear(x, w, bias) })
}

// attention is the fused op, or gorgonia's stock ops for a layer with a score stage or a
// normaliser of a scheme's own, which have no fused kernel (the decomposed path).
func (b *builder) attention(q, k, v *G.Node, in nn.AttentionInputs, c nn.AttentionConfig) *G.Node {
	if in.Scores != nil || in.Weights != nil {
		return b.do(func() (*G.Node, error) { return stock.AttentionWith(q, k, v, in, c) })
	}
	return b.do(func() (*G.Node, error) { return b.ops.attention(q, k, v, in, c) })
}

// logForget is nil for a layer without forget gates.
func (b *builder) logForget(x *G.Node, g *gateNodes) *G.Node {
	if g == nil {
		return nil
	}
	return b.do(func() (*G.Node, error) { return b.ops.logForget(x, g.w, g.b, g.layer) })
}
func (b *builder) gelu(x *G.Node) *G.Node {
	return b.do(func() (*G.Node, error) { return b.ops.gelu(x) })
}
func (b *builder) add(x, y *G.Node) *G.Node {
	return b.do(func() (*G.Node, error) { return b.ops.add(x, y) })
}
func (b *builder) crossEntropy(logits, targets *G.Node) *G.Node {
	return b.do(func() (*G.Node, error) { return b.ops.crossEntropy(logits, targets) })
}
