package model

import (
	"fmt"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"extrapolate/model/nn"
	"extrapolate/position"
)

// Graph is the model unrolled for batches of Batch sequences of Len tokens. It is built once and
// run for every batch of that shape: fill IDs and Targets, then Run.
type Graph struct {
	Batch, Len int
	Train      bool
	// IDs and Targets are the graph's inputs, written in place before each run.
	IDs, Targets []int

	g      *G.ExprGraph
	vm     G.VM
	loss   *G.Node
	logits *G.Node
	grads  G.Nodes // one per model parameter, when Train
	onehot *tensor.Dense
	// Stats holds, with Options.AttentionStats, each layer's attention statistics, summed over
	// every run of the graph.
	Stats []*nn.AttentionStats
}

// Options choose how a graph is built.
type Options struct {
	// Train adds the backward pass.
	Train bool
	// Plain builds the graph from gorgonia's stock ops instead of the fused ones: the reference
	// in tests, and the baseline of the speed comparison.
	Plain bool
	// AttentionStats collects each layer's attention entropy and mass on keys farther back than
	// the training length, by head and query position (Graph.Stats); fused ops only.
	AttentionStats bool
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
	pos, err := m.positions(g, scheme, w, batch, n, o)
	if err != nil {
		return nil, err
	}
	if o.AttentionStats {
		if o.Plain {
			return nil, fmt.Errorf("model: attention statistics come from the fused attention op, not the stock ops")
		}
		if m.Config.TrainLen <= 0 {
			return nil, fmt.Errorf("model: attention statistics need the training length, to tell far keys")
		}
		for l := range pos.layers {
			st := &nn.AttentionStats{Far: m.Config.TrainLen}
			pos.layers[l].config.Stats = st
			gr.Stats = append(gr.Stats, st)
		}
	}
	b := &builder{ops: fused}
	if o.Plain {
		b.ops = gr.stock(m, batch*n)
	}
	gr.logits = b.forward(m, w, ids, pos)
	gr.loss = b.crossEntropy(gr.logits, targets)
	if b.err != nil {
		return nil, fmt.Errorf("model: building the graph: %w", b.err)
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
	x := b.embed(ids, w[m.wte], pos.table, pos.n, pos.learnedTable)
	for l, h := range m.h {
		a := pos.layers[l]
		y := b.layerNorm(x, w[h.ln1G], w[h.ln1B])
		q := b.linear(y, w[h.wq], w[h.bq])
		k := b.linear(y, w[h.wk], w[h.bk])
		v := b.linear(y, w[h.wv], w[h.bv])
		x = b.add(x, b.linear(b.attention(q, k, v, a.bias, a.scale, a.config), w[h.wo], w[h.bo]))
		y = b.layerNorm(x, w[h.ln2G], w[h.ln2B])
		x = b.add(x, b.linear(b.gelu(b.linear(y, w[h.w1], w[h.b1])), w[h.w2], w[h.b2]))
	}
	return b.linear(b.layerNorm(x, w[m.lnfG], w[m.lnfB]), w[m.whead], w[m.bhead])
}

// Run computes the mean loss over the batch in IDs and Targets and, for a training graph, the
// gradients.
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

func oneHot(t *tensor.Dense, targets []int) {
	v := t.Shape()[1]
	switch d := t.Data().(type) {
	case []float32:
		clear(d)
		for r, x := range targets {
			d[r*v+x] = 1
		}
	case []float64:
		clear(d)
		for r, x := range targets {
			d[r*v+x] = 1
		}
	}
}

// positions is a scheme's contribution at one length, as graph nodes and attention settings.
type positions struct {
	n int
	// table is added to the embeddings; learnedTable says it is computed from weights.
	table        *G.Node
	learnedTable bool
	layers       []layerPositions
}

// layerPositions is what one layer's attention takes: its settings, and its bias and scale
// nodes or nil.
type layerPositions struct {
	config      nn.AttentionConfig
	bias, scale *G.Node
}

// positions asks the scheme what it adds at n positions, through the optional interfaces it
// implements, and makes graph nodes of it: constants for fixed numbers, and for numbers computed
// from weights, nodes that compute them (nn.Compute) so that their gradient reaches the weights.
// A position.PerLayer scheme is asked for each layer's scheme, which acts in that layer only.
func (m *Model) positions(g *G.ExprGraph, s position.Scheme, w nodes, batch, n int, opt Options) (positions, error) {
	p := positions{n: n}
	d := m.Config.DModel
	if err := refuseFixedAndLearned(s); err != nil {
		return p, err
	}
	checkTable := func(t *position.Table) error {
		if t.Cols != d || t.Rows < n || len(t.Values) < n*d {
			return fmt.Errorf("model: the %s scheme's position table %dx%d does not fit %d positions of width %d", s.Name(), t.Rows, t.Cols, n, d)
		}
		return nil
	}
	switch e := s.(type) {
	case position.Embedder:
		t, err := e.Embedding(n)
		if err != nil {
			return p, err
		}
		if err := checkTable(t); err != nil {
			return p, err
		}
		p.table = constant(g, m.Dtype, "pe", t.Values[:n*d], n, d)
	case position.LearnedEmbedder:
		weights := m.schemeNodes(0, w)
		t, err := e.LearnedEmbedding(m.SchemeWeights(0), n)
		if err != nil {
			return p, err
		}
		if err := checkTable(t); err != nil {
			return p, err
		}
		if p.table, err = nn.Compute("PositionTable", tableOf{e, n, d}, tensor.Shape{n, d}, weights...); err != nil {
			return p, err
		}
		p.learnedTable = true
	}
	var scale func(l int) (*G.Node, error)
	switch m.Config.Attention.Scale {
	case "logn":
		node := constant(g, m.Dtype, "logn", lognScale(m.Config.Heads, n, m.Config.TrainLen), m.Config.Heads, n)
		scale = func(int) (*G.Node, error) { return node, nil }
	case "logn_train":
		node := constant(g, m.Dtype, "logn", lognTrainScale(m.Config.Heads, n), m.Config.Heads, n)
		scale = func(int) (*G.Node, error) { return node, nil }
	case "ssmax":
		scale = func(l int) (*G.Node, error) {
			return nn.Compute(fmt.Sprintf("SSMax%d", l), ssmaxScale{m.Config.Heads, n}, tensor.Shape{m.Config.Heads, n}, w[m.h[l].ssmax])
		}
	}
	var shared *G.Node // a fixed bias of the whole model's scheme, made once for every layer
	os := owners(s, m.Config.Layers)
	for l := 0; l < m.Config.Layers; l++ {
		o := os[min(l, len(os)-1)]
		// The scheme's layer and the index of its weights' owner: layer l of the whole model's
		// scheme, or the only layer of layer l's own scheme.
		ls, layer, own := o.scheme, l, 0
		if _, ok := s.(position.PerLayer); ok {
			if err := refuseFixedAndLearned(ls); err != nil {
				return p, err
			}
			layer, own = 0, l
		}
		a := layerPositions{config: nn.AttentionConfig{Batch: batch, SeqLen: n, Heads: m.Config.Heads}}
		if r, ok := ls.(position.Rotator); ok {
			rot, err := r.Rotation(n)
			if err != nil {
				return p, err
			}
			a.config.Positions = nn.Positions{Pairs: len(rot.InvFreq), Interleaved: rot.Interleaved, Cos: rot.Cos, Sin: rot.Sin, KeyCos: rot.KeyCos, KeySin: rot.KeySin}
		}
		switch e := ls.(type) {
		case position.Biaser:
			if shared == nil || o.prefix != "" {
				b, err := e.Bias(n)
				if err != nil {
					return p, err
				}
				if err := m.checkBias(ls, b, n); err != nil {
					return p, err
				}
				shared = constant(g, m.Dtype, "bias"+o.prefix, b.Values, biasShape(b, m.Config.Heads, n)...)
			}
			a.bias, a.config.Bias = shared, biasForm(shared)
		case position.LearnedBiaser:
			if r, ok := e.(position.BiasRower); ok && !opt.Train && !opt.Plain && BiasByRow(r, m.Config.Heads, n) {
				a.config.Bias, a.config.BiasRow = nn.ByRow, biasRows(r, m.SchemeWeights(own), layer)
				break
			}
			weights := m.schemeNodes(own, w)
			b, err := e.LearnedBias(m.SchemeWeights(own), layer, n)
			if err != nil {
				return p, err
			}
			if err := m.checkBias(ls, b, n); err != nil {
				return p, err
			}
			if a.bias, err = nn.Compute(fmt.Sprintf("PositionBias%d", l), biasOf{e, layer, n}, biasShape(b, m.Config.Heads, n), weights...); err != nil {
				return p, err
			}
			a.config.Bias, a.config.LearnBias = biasForm(a.bias), true
		}
		if scale != nil {
			var err error
			if a.scale, err = scale(l); err != nil {
				return p, err
			}
			a.config.QueryScale, a.config.LearnQueryScale = true, m.Config.Attention.Scale == "ssmax"
		}
		p.layers = append(p.layers, a)
	}
	return p, nil
}

// refuseFixedAndLearned refuses a scheme that gives a fixed and a learned table, or a fixed and a learned bias.
func refuseFixedAndLearned(s position.Scheme) error {
	_, fixedTable := s.(position.Embedder)
	_, learnedTable := s.(position.LearnedEmbedder)
	_, fixedBias := s.(position.Biaser)
	_, learnedBias := s.(position.LearnedBiaser)
	if fixedTable && learnedTable || fixedBias && learnedBias {
		return fmt.Errorf("model: the %s scheme gives both a fixed and a learned table or bias", s.Name())
	}
	return nil
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
	t := convertTo(tensor.New(tensor.WithShape(shape...), tensor.WithBacking(append([]float64(nil), v...))), dt)
	return G.NewTensor(g, dt, len(shape), G.WithShape(shape...), G.WithName(name), G.WithValue(t))
}

// tableOf computes a learned position table from the scheme's weights.
type tableOf struct {
	s    position.LearnedEmbedder
	n, d int
}

func (t tableOf) Forward(in [][]float64, out []float64) error {
	tab, err := t.s.LearnedEmbedding(in, t.n)
	if err != nil {
		return err
	}
	copy(out, tab.Values[:t.n*t.d])
	return nil
}

func (t tableOf) Backward(in [][]float64, dout []float64, din [][]float64) {
	t.s.LearnedEmbeddingGrad(in, t.n, dout, din)
}

// biasOf computes one layer's learned bias from the scheme's weights.
// BiasRowsAbove is the number of values (heads·n²) of a per-query bias above which evaluation
// computes it a query at a time inside attention rather than hold it whole: at 4 heads, the
// lengths above 2048. The values are the same either way; below it, computing them once for
// every sequence of a batch is faster.
const BiasRowsAbove = 1 << 24

// BiasByRow reports whether an evaluation graph of a model with heads heads computes the bias of
// the scheme s at n positions a query at a time.
func BiasByRow(s position.Scheme, heads, n int) bool {
	_, ok := s.(position.BiasRower)
	return ok && int64(heads)*int64(n)*int64(n) > BiasRowsAbove
}

// biasRows is the bias of a layer's scheme one query at a time, from the weights w as they are
// when the graph is built: an evaluation graph's, which never change.
func biasRows(r position.BiasRower, w [][]float64, layer int) func(h, i, j0 int, dst []float64) {
	return func(h, i, j0 int, dst []float64) { r.LearnedBiasRow(w, layer, h, i, j0, dst) }
}

type biasOf struct {
	s        position.LearnedBiaser
	layer, n int
}

func (b biasOf) Forward(in [][]float64, out []float64) error {
	bias, err := b.s.LearnedBias(in, b.layer, b.n)
	if err != nil {
		return err
	}
	copy(out, bias.Values)
	return nil
}

func (b biasOf) Backward(in [][]float64, dout []float64, din [][]float64) {
	b.s.LearnedBiasGrad(in, b.layer, b.n, dout, din)
}

// ops are the layers the forward pass is made of: the fused ones below, or gorgonia's stock ones
// (stock.go), the reference for tests and the bench.
type ops struct {
	embed        func(ids, wte, pe *G.Node, seqLen int, learned bool) (*G.Node, error)
	layerNorm    func(x, g, b *G.Node) (*G.Node, error)
	linear       func(x, w, b *G.Node) (*G.Node, error)
	attention    func(q, k, v, bias, scale *G.Node, c nn.AttentionConfig) (*G.Node, error)
	gelu         func(x *G.Node) (*G.Node, error)
	add          func(a, b *G.Node) (*G.Node, error)
	crossEntropy func(logits, targets *G.Node) (*G.Node, error)
}

var fused = ops{
	embed:        nn.Embed,
	layerNorm:    func(x, g, b *G.Node) (*G.Node, error) { return nn.LayerNorm(x, g, b, lnEps) },
	linear:       nn.Linear,
	attention:    nn.Attention,
	gelu:         nn.GELU,
	add:          nn.Add,
	crossEntropy: nn.CrossEntropy,
}

// builder applies ops, keeping the first error so the forward pass reads as one expression per
// line; once an op fails, the rest return nil and are not built.
type builder struct {
	ops ops
	err error
}

func (b *builder) do(f func() (*G.Node, error)) *G.Node {
	if b.err != nil {
		return nil
	}
	n, err := f()
	b.err = err
	return n
}

func (b *builder) embed(ids, wte, pe *G.Node, n int, learned bool) *G.Node {
	return b.do(func() (*G.Node, error) { return b.ops.embed(ids, wte, pe, n, learned) })
}
func (b *builder) layerNorm(x, g, bias *G.Node) *G.Node {
	return b.do(func() (*G.Node, error) { return b.ops.layerNorm(x, g, bias) })
}
func (b *builder) linear(x, w, bias *G.Node) *G.Node {
	return b.do(func() (*G.Node, error) { return b.ops.linear(x, w, bias) })
}
func (b *builder) attention(q, k, v, bias, scale *G.Node, c nn.AttentionConfig) *G.Node {
	return b.do(func() (*G.Node, error) { return b.ops.attention(q, k, v, bias, scale, c) })
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
