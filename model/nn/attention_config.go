package nn

import G "gorgonia.org/gorgonia"

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
	// Softpick normalises each query's scores by softpick in place of the softmax
	// (attention_softpick.go): ReLU(e^x − 1) over Σ|e^x − 1|, so that a row's weights may sum to
	// less than 1 and a key with a score of at most 0 gets none.
	Softpick bool
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
	// Sinks adds a (heads) input of sink logits (gpt-oss's attention sinks;
	// attention_sinks.go): each query's softmax gains the term e^{s_h} in its denominator, as
	// a key with that score and no value would, so that a head may attend to nothing. The input
	// is always differentiable.
	Sinks bool
}

// AttentionInputs are attention's inputs besides q, k and v, each nil unless the config asks
// for it: the bias (Bias), the query scale (QueryScale), the log forget gates (LogForget), the
// position embeddings of contextual positions (CoPE) and the sink logits (Sinks).
type AttentionInputs struct {
	Bias, Scale, LogForget, CoPE, Sinks *G.Node
	// Scores, when set, is a stage with no fused kernel: it takes the scores, (batch·heads, n,
	// n) q·k/√head_dim times the temperature, before the causal mask, CoPE, the bias and the
	// forget gates are added, and returns them changed, in gorgonia's operations. The fused op refuses it; the stock composition (package stock) applies it
	// before the normaliser, and gorgonia differentiates it: the decomposed path a model
	// takes for a layer whose stage has no kernel.
	Scores func(scores *G.Node) (*G.Node, error)
	// Weights, when set, is a normaliser with no fused kernel, in place of the softmax: it takes
	// the scores after every stage and the mask (a key a query does not see at −1e9) and seen,
	// a constant of their shape, 1 where query i sees key j and 0 elsewhere, and returns the
	// weights, in gorgonia's operations. Like Scores, it runs on the stock ops only.
	Weights func(scores, seen *G.Node) (*G.Node, error)
}

// An input is one of attention's optional inputs, as the op takes them after q, k and v: the
// one table that the node list, the types, the differentiation and the indices are read from.
type input struct {
	name  string
	on    bool // the config asks for it
	dims  int
	learn bool // the op differentiates it
	node  func(AttentionInputs) *G.Node
}

// inputs lists attention's optional inputs in the order the op takes them.
func (c AttentionConfig) inputs() []input {
	biasDims := 2
	if c.Bias == PerQuery {
		biasDims = 3
	}
	return []input{
		{"bias", c.Bias.input(), biasDims, c.LearnBias, func(x AttentionInputs) *G.Node { return x.Bias }},
		{"query scale", c.QueryScale, 2, c.LearnQueryScale, func(x AttentionInputs) *G.Node { return x.Scale }},
		{"log forget gates", c.LogForget, 2, true, func(x AttentionInputs) *G.Node { return x.LogForget }},
		{"position embeddings", c.CoPE, 3, true, func(x AttentionInputs) *G.Node { return x.CoPE }},
		{"sink logits", c.Sinks, 1, true, func(x AttentionInputs) *G.Node { return x.Sinks }},
	}
}

// index returns the op's index of the named optional input, −1 when the config has none.
func (c AttentionConfig) index(name string) int {
	next := 3
	for _, in := range c.inputs() {
		if in.name == name && in.on {
			return next
		}
		if in.on {
			next++
		}
	}
	return -1
}

// extra returns the indices of the bias, scale and log forget inputs, -1 for those absent.
func (c AttentionConfig) extra() (bias, scale, forget int) {
	return c.index("bias"), c.index("query scale"), c.index("log forget gates")
}
