// Package position holds the position schemes a transformer can be trained with, and a registry
// of them by name. A scheme acts at up to three places: it may add a vector to each input
// embedding (learned, sinusoidal), rotate the queries and keys inside attention (RoPE), or add a
// bias to the attention scores (ALiBi, T5, KERPLE, FIRE), which may come from the content
// (FoX's forget gates, CoPE's positions counted by gates); or it may replace the softmax that
// normalises the scores (stick-breaking attention). It implements one optional interface
// per place it acts, as a database/sql driver does, and may own trainable weights. A new scheme
// is one file, in this package or any other, that registers a constructor in its init function:
//
//	func init() { position.Register("mine", newMine) }
//
// Attention temperatures (temperature.go) and evaluation-time distance maps (distancemap.go)
// are registered and asked the same way. Code that reads schemes, temperatures or maps asks them
// through the adapter in adapter.go rather than asserting the optional interfaces itself.
package position

import (
	"errors"
	"fmt"
	"image/color"
	"math"

	G "gorgonia.org/gorgonia"

	"extrapolate/internal/pluginhint"
)

// Scheme gives a causal transformer its sense of position. It acts through the optional
// interfaces it implements: Embedder, Rotator and Biaser with fixed numbers, LearnedEmbedder and
// LearnedBiaser with weights of its own (or GraphBiaser, differentiated by gorgonia), ForgetGater and ContextPositioner with weights read with
// the content, StickBreaker in place of the softmax. A scheme that implements none gives no position
// information beyond the causal mask (NoPE).
//
// A scheme that cannot handle n positions returns an error wrapping ErrNotApplicable from the
// method asked for n positions.
type Scheme interface {
	// Name is the name the scheme is registered under.
	Name() string
}

// Embedder adds a fixed table to the token embeddings.
type Embedder interface {
	// Embedding returns the table for n positions: row t is added at position t.
	Embedding(n int) (*Table, error)
}

// Rotator rotates each head's queries and keys by position.
type Rotator interface {
	Rotation(n int) (*Rotation, error)
}

// Biaser adds a fixed bias to the attention scores.
type Biaser interface {
	// Bias returns the bias for n positions.
	Bias(n int) (*Bias, error)
}

// Learner is a scheme with trainable weights. The model creates them, saves them in its
// checkpoints and trains them with its other weights; the scheme computes what it adds from
// them, and the gradient of that back to them, through LearnedEmbedder or LearnedBiaser.
type Learner interface {
	Scheme
	// Weights declares the scheme's weights, in the order they are created and saved.
	Weights() []Weight
}

// LearnedEmbedder adds a table computed from the scheme's weights to the token embeddings.
type LearnedEmbedder interface {
	Learner
	// LearnedEmbedding returns the table for n positions, n rows of the model's width, from the
	// weights w (in the order Weights declares them).
	LearnedEmbedding(w [][]float64, n int) (*Table, error)
	// LearnedEmbeddingGrad adds to dw the gradient of the loss with respect to each weight,
	// given dTable, its gradient with respect to the table LearnedEmbedding returned.
	LearnedEmbeddingGrad(w [][]float64, n int, dTable []float64, dw [][]float64)
}

// LearnedBiaser adds a bias computed from the scheme's weights to the attention scores of each
// layer.
type LearnedBiaser interface {
	Learner
	// LearnedBias returns layer's bias for n positions from the weights w.
	LearnedBias(w [][]float64, layer, n int) (*Bias, error)
	// LearnedBiasGrad adds to dw the gradient of the loss with respect to each weight, given
	// dBias, its gradient with respect to the values of the bias LearnedBias returned.
	LearnedBiasGrad(w [][]float64, layer, n int, dBias []float64, dw [][]float64)
}

// A GraphBiaser is a LearnedBiaser written as its forward pass alone: it builds layer's bias
// from its weights with gorgonia's operations, and gorgonia differentiates it, so it has no
// gradient of its own to write (graphbias.go). The model builds the node in its own graph, in
// the model's float type, and feeds it to attention's bias input as it does a LearnedBiaser's.
type GraphBiaser interface {
	Learner
	// GraphBias returns a node of g holding layer's bias for n positions, computed from w, the
	// nodes of the weights in the order Weights declares them: (heads, n) for a bias by
	// distance, [h][δ] added to the key δ positions back, or (heads, n, n) for one that depends
	// on the query too, [h][i][j]. Constants it needs are of w's dtype (GraphConstant).
	GraphBias(g *G.ExprGraph, w []*G.Node, layer, n int) (*G.Node, error)
}

// A GraphScorer changes each layer's attention scores itself, with gorgonia operations on the
// scores and on its weights (Learner; Weights may declare none): a stage of attention for which
// no fused kernel exists. The model runs the attention of its layers on gorgonia's stock ops
// (the decomposed attention, nn/stock), and gorgonia differentiates the stage, its weights
// included; every other layer keeps the fused op. It takes no distance map, and measures that
// read the fused op's statistics (attention, sinks) do not apply to its runs.
type GraphScorer interface {
	Learner
	// GraphScores returns layer's scores changed: scores is (batch·heads, n, n), row b·heads+h
	// head h of sequence b, entry [i][j] q_i·k_j/√head_dim times the temperature, before the
	// causal mask and any bias are added (the keys after the query are masked afterwards,
	// whatever it gives them); w are the nodes of the weights in the order Weights declares
	// them. The result must keep the shape and type of scores.
	GraphScores(g *G.ExprGraph, w []*G.Node, scores *G.Node, layer, heads, n int) (*G.Node, error)
}

// A GraphNormaliser replaces attention's softmax with a normaliser of its own, written with
// gorgonia operations on the scores and on its weights (Learner; Weights may declare none): sigmoid
// attention, say, for which no fused kernel exists. As for a GraphScorer, the model runs the
// attention of its layers on gorgonia's stock ops and gorgonia differentiates it; it takes no
// distance map, and the measures that read the fused op's statistics do not apply to its runs.
type GraphNormaliser interface {
	Learner
	// GraphWeights returns layer's attention weights from its scores, (batch·heads, n, n), row
	// b·heads+h head h of sequence b, after every stage, the bias and the causal mask: a key
	// that query i does not see (j > i, or outside a window) scores −1e9. seen is a constant of
	// the same shape, 1 where query i sees key j and 0 elsewhere, for a normaliser that must
	// give such keys exactly nothing. w are the nodes of the weights in the order Weights
	// declares them. The result must keep the shape and type of scores; row i's weights need
	// not sum to 1.
	GraphWeights(g *G.ExprGraph, w []*G.Node, scores, seen *G.Node, layer, heads, n int) (*G.Node, error)
}

// A BiasRower is a LearnedBiaser whose bias depends on the query's position too (PerQuery) and
// can be computed one query at a time, so that evaluation at long lengths need not hold its
// heads·n² values at once.
type BiasRower interface {
	LearnedBiaser
	// LearnedBiasRow writes into dst layer's bias in head h for query i and keys j0, j0+1, …,
	// j0+len(dst)−1 (all at most i): the values LearnedBias gives, bit for bit. It is called
	// from several goroutines at once.
	LearnedBiasRow(w [][]float64, layer, h, i, j0 int, dst []float64)
}

// A ForgetGater takes its bias from the content: each head of each layer has a forget gate
// f_t = σ(x_t·W + b), computed from the layer's normalised input x_t as q, k and v are, and the
// score of query i for key j ≤ i gains Σ_{l=j+1..i} log f_l (FoX, the Forgetting Transformer).
// No function of positions gives that bias, so the scheme computes nothing itself: it declares
// the gate's weights (Learner) and says which they are; the model computes the gates with its own
// ops, and attention adds the bias inside its kernel, a query at a time when it evaluates.
//
// It is not a general "bias from the content": each scheme that reads the content does so at a
// place of its own, and is an optional interface of its own, as the other places are. FoX
// reads the layer's input through a linear map; contextual positions (CoPE, ContextPositioner)
// count gates of q·k inside attention; stick-breaking attention would replace the softmax. One interface for all
// three would have to hand the scheme activations from inside the attention kernel and take
// gradients back through it, query by query.
type ForgetGater interface {
	Learner
	// ForgetGate says which of the weights Weights declares are the gate's.
	ForgetGate() ForgetGate
}

// ForgetGate names a forget gate's weights by their indices in the scheme's Weights: Weight,
// (layers, d_model, heads), maps a layer's normalised input to each head's gate logit, and
// Bias, (layers, heads), is added to it, layers being the scheme's (1 for a slot of a mix).
type ForgetGate struct{ Weight, Bias int }

// A StickBreaker normalises attention by stick-breaking in place of the softmax (Tan et al.,
// ICLR 2025): query i gives key j the weight β_ij·Π_{j<k<i}(1−β_ik), β = σ of the score, so
// that the nearest keys claim their share of the stick first and the weights of a row sum to at
// most 1, the rest left unattended. It is no position at all, and needs none: the order of the
// keys is in the product. The attention op computes it inside its kernel, in training and in
// evaluation alike; the scheme only says that it applies and how.
type StickBreaker interface {
	StickBreaking() StickBreaking
}

// StickBreaking is how a StickBreaker normalises: with AttendCurrent, query i's stick runs over
// keys j ≤ i, the product over j < k ≤ i; without it, over the keys before it only, and the
// first query attends to nothing.
type StickBreaking struct{ AttendCurrent bool }

// A ContextPositioner counts positions from the content inside attention (CoPE, contextual
// position encoding): each key j ≤ i of query i has a gate σ(q_i·k_j/√d), the position of key j
// is the sum of the gates of keys j..i, and the score gains query i's logit for that position,
// q_i·e[p]/√d, interpolated between the embeddings at ⌊p⌋ and ⌈p⌉. The gates read the scores the
// attention kernel computes anyway, row by row, so the scheme computes nothing itself: it
// declares its position embeddings (Learner) and says which weight they are, and attention
// counts, looks up and differentiates inside its kernel, as it does FoX's forget gates.
type ContextPositioner interface {
	Learner
	// ContextPositions says which of the weights Weights declares are the position embeddings.
	ContextPositions() ContextPositions
}

// ContextPositions names the position embeddings by their index in the scheme's Weights:
// Embedding, (layers, head_dim, npos), column p of a layer's matrix the embedding of position
// p, shared by the layer's heads; positions past npos−1 take the last one.
type ContextPositions struct{ Embedding int }

// ErrNotApplicable says that a scheme cannot, by design, handle a sequence length.
var ErrNotApplicable = errors.New("not applicable")

// Table is an (Rows, Cols) matrix added to the token embeddings, row t at position t.
type Table struct {
	Rows, Cols int
	// Values holds the matrix row by row.
	Values []float64
}

// Rotation rotates pairs of dimensions of each head's queries and keys, pair p at position t by
// the angle t·InvFreq[p], so that the score of a query and a key depends on their distance only.
type Rotation struct {
	// InvFreq holds each pair's angular frequency, in radians per position.
	InvFreq []float64
	// Interleaved pairs dimensions (2p, 2p+1); otherwise (p, p+d/2), as rotate_half does.
	Interleaved bool
	// AttentionFactor multiplies both cos and sin (YaRN), so the scores scale by its square.
	AttentionFactor float64
	// Cos and Sin hold AttentionFactor·cos(t·InvFreq[p]) and ·sin at t·len(InvFreq)+p.
	Cos, Sin []float64
	// KeyCos and KeySin, when set, rotate the keys in place of Cos and Sin (xPos scales the
	// queries and the keys differently).
	KeyCos, KeySin []float64
}

// NewRotation tabulates a rotation for n positions.
func NewRotation(invFreq []float64, interleaved bool, factor float64, n int) *Rotation {
	r := &Rotation{InvFreq: invFreq, Interleaved: interleaved, AttentionFactor: factor}
	p := len(invFreq)
	r.Cos, r.Sin = make([]float64, n*p), make([]float64, n*p)
	for t := 0; t < n; t++ {
		for i, f := range invFreq {
			s, c := math.Sincos(float64(t) * f)
			r.Cos[t*p+i], r.Sin[t*p+i] = factor*c, factor*s
		}
	}
	return r
}

// Apply returns the query x of a head, rotated as at position t: pairs (i, i+p) of its first 2p
// dimensions (or (2i, 2i+1) when Interleaved), for p = len(InvFreq).
func (r *Rotation) Apply(x []float64, t int) []float64 {
	return rotate(x, r.Cos, r.Sin, len(r.InvFreq), r.Interleaved, t)
}

// ApplyKey is Apply for a key, which KeyCos and KeySin rotate when they are set.
func (r *Rotation) ApplyKey(x []float64, t int) []float64 {
	if r.KeyCos == nil {
		return r.Apply(x, t)
	}
	return rotate(x, r.KeyCos, r.KeySin, len(r.InvFreq), r.Interleaved, t)
}

func rotate(x, cos, sin []float64, p int, interleaved bool, t int) []float64 {
	y := append([]float64(nil), x...)
	for i := 0; i < p; i++ {
		a, b := i, i+p
		if interleaved {
			a, b = 2*i, 2*i+1
		}
		c, s := cos[t*p+i], sin[t*p+i]
		y[a] = x[a]*c - x[b]*s
		y[b] = x[b]*c + x[a]*s
	}
	return y
}

// Bias is what a scheme adds to the attention scores of each head for n positions: the score of
// query i for key j ≤ i gets Values[h·Len+(i−j)] in head h when the bias depends on the distance
// only, and Values[(h·Len+i)·Len+j] when it depends on the query's position too (PerQuery).
type Bias struct {
	Heads, Len int
	PerQuery   bool
	Values     []float64
}

// NewBias returns a zero bias for heads heads and n positions.
func NewBias(heads, n int, perQuery bool) *Bias {
	size := heads * n
	if perQuery {
		size *= n
	}
	return &Bias{Heads: heads, Len: n, PerQuery: perQuery, Values: make([]float64, size)}
}

// At returns the bias of head h for query i and key j ≤ i.
func (b *Bias) At(h, i, j int) float64 {
	if b.PerQuery {
		return b.Values[(h*b.Len+i)*b.Len+j]
	}
	return b.Values[h*b.Len+i-j]
}

// Weight declares one trainable weight of a scheme.
type Weight struct {
	// Name is the weight's name in checkpoints; it must not clash with the model's own.
	Name string
	Dims []int
	// Std > 0 draws the initial values N(0, Std²) from the model's generator, like its own
	// matrices; Uniform > 0 draws them from U(0, Uniform) with the same generator; otherwise
	// the weight starts at Init, or at zero when Init is nil.
	Std     float64
	Uniform float64
	Init    []float64
	// Decay says whether AdamW's weight decay applies.
	Decay bool
	// LRScale multiplies the learning rate (and so the decoupled weight decay, as a PyTorch
	// parameter group's lr does) for this weight; 0 means 1.
	LRScale float64
	// Floor, when set, is the least value the weight may take: the initial values and every
	// update are clamped to it, as KERPLE's reference clamps its parameters in place.
	Floor *float64
}

// Size is the number of values in the weight.
func (w Weight) Size() int {
	n := 1
	for _, d := range w.Dims {
		n *= d
	}
	return n
}

// Spec is what a scheme is built from: the model's shape and the position section of the config.
type Spec struct {
	DModel, Heads, Layers int
	// TrainLen is the sequence length the model is trained at.
	TrainLen int
	Config   Config
}

// HeadDim is the width of one attention head.
func (s Spec) HeadDim() int { return s.DModel / s.Heads }

// Factory builds a scheme, or says which config field is wrong.
type Factory func(Spec) (Scheme, error)

var schemes = registry[Factory]{kind: "scheme"}

// Register makes a scheme available by name. It panics if the name is taken, as
// database/sql.Register does, since that is a programming error.
func Register(name string, f Factory) { schemes.add(name, f) }

// builtin holds the schemes of this package, which register, and only this package's init
// functions, writes: read-only once a program's packages are initialised.
var builtin = map[string]bool{}

// register is Register for this package's own schemes, which Builtin tells apart.
func register(name string, f Factory) {
	Register(name, f)
	builtin[name] = true
}

// Builtin reports whether the scheme name is one of this package's own, rather than one
// registered from another package: the figures draw the built-in ones from a table made for them
// (experiments/plot), and a scheme of one's own from what it is (Drawn, and its family).
func Builtin(name string) bool { return builtin[name] }

// Names lists the registered schemes, sorted.
func Names() []string { return schemes.names() }

// New builds the scheme spec.Config.Scheme names.
func New(spec Spec) (Scheme, error) {
	f, ok := schemes.lookup(spec.Config.Scheme)
	if !ok {
		return nil, fmt.Errorf("position.scheme: unknown scheme %q (known: %v); %s", spec.Config.Scheme, Names(), pluginhint.For("scheme"))
	}
	if spec.DModel <= 0 || spec.Heads <= 0 || spec.DModel%spec.Heads != 0 {
		return nil, fmt.Errorf("position: model width %d does not split into %d heads", spec.DModel, spec.Heads)
	}
	if spec.TrainLen <= 0 {
		return nil, fmt.Errorf("position: training length %d", spec.TrainLen)
	}
	if spec.Layers <= 0 {
		spec.Layers = 1
	}
	s, err := f(spec)
	if err != nil {
		return nil, err
	}
	if _, takes := ScalingOf(s); spec.Config.Scaling != nil && !takes {
		return nil, fmt.Errorf("position.scaling: the %s scheme does not take a scaling", spec.Config.Scheme)
	}
	m, err := NewDistanceMap(spec.Config.DistanceMap, spec.TrainLen)
	if err != nil {
		return nil, err
	}
	if m != nil {
		if err := MapAppliesTo(m, s); err != nil {
			return nil, err
		}
	}
	return withWindow(s, spec.Config.Window, m)
}

// Scalable is a scheme that takes a RoPE scaling (position.scaling): one that changes its
// rotation for lengths beyond the training length.
type Scalable interface {
	Scheme
	// Scaling returns the scaling in force, nil for none.
	Scaling() *Scaling
}

// LengthChecker is a scheme whose fields bound the lengths it can compute (xPos's scales
// overflow float32 past a length its fields set). CheckLength says whether n positions are within
// the bound without computing anything, with an error naming the field, so that a command can
// refuse the lengths it was given before training.
type LengthChecker interface {
	CheckLength(n int) error
}

// Check asks the scheme for everything it adds at n positions, with its weights at zero where
// it has weights, and returns the first error: whether the scheme can handle n positions at
// all, before a model is built.
func Check(s Scheme, n int) error {
	if err := CheckLength(s, n); err != nil {
		return err
	}
	w := ZeroWeights(s)
	if _, err := TableAt(s, w, n); err != nil {
		return err
	}
	if _, err := RotationAt(s, n); err != nil {
		return err
	}
	if rows := BiasRows(s, w, 0); rows != nil {
		// Its heads·n² values need not fit in memory at once: a length it can take a query at a
		// time is checked on one position, and on the last query's row.
		rows(0, n-1, 0, make([]float64, n))
		n = 1
	}
	_, err := BiasAt(s, w, 0, n)
	return err
}

// Describer is a scheme that gives numbers of its own for n positions to show beside what it
// adds (cmd/inspect -json): RoPE's base, ALiBi's slopes, T5's buckets.
type Describer interface {
	Describe(n int) map[string]any
}

// Drawn is a scheme registered from another package that says how the figures of every report
// draw it: its Look. A scheme without it is drawn in a look chosen from its family, which is
// decided by what it adds (a table, a rotation, a bias, positions from the content), so that a
// scheme of one's own needs no table in another package edited for it.
type Drawn interface {
	Look() Look
}

// Look is how a scheme asks to be drawn: its colour, or the zero colour for one chosen for it
// (one no built-in scheme has), and its marker, one of Markers, or "" for one its family's
// built-in schemes leave free.
type Look struct {
	Color  color.RGBA
	Marker string
}

// Markers are the names of the markers a Look may ask for.
var Markers = []string{"ring", "square", "triangle", "cross", "plus", "circle", "box", "pyramid"}

// Sourced is a scheme with weights that says how they are set and trained (initialisation,
// scale, learning rate, weight decay) and the source of each choice, in a sentence for reports:
// a setting a paper or its reference code fixes is followed, and named.
type Sourced interface {
	Sources() string
}
