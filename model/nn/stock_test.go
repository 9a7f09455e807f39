package nn_test

import (
	"math/rand/v2"
	"strings"
	"testing"

	G "gorgonia.org/gorgonia"

	"extrapolate/internal/gradcheck"
	"extrapolate/model/nn"

	"gorgonia.org/tensor"

	"extrapolate/model/nn/stock"
)

func TestLinearMatchesStockOps(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 1))
	in := []gradcheck.Input{gradcheck.Var("x", gradcheck.Rand(rng, 1, 6, 4)), gradcheck.Var("w", gradcheck.Rand(rng, 1, 4, 3)), gradcheck.Var("b", gradcheck.Rand(rng, 1, 3))}
	gradcheck.Same(t, in,
		func(g *G.ExprGraph, x []*G.Node) (*G.Node, error) { return nn.Linear(x[0], x[1], x[2]) },
		func(g *G.ExprGraph, x []*G.Node) (*G.Node, error) { return stock.Linear(x[0], x[1], x[2]) })
}

func TestGELUMatchesStockOps(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 2))
	gradcheck.Same(t, []gradcheck.Input{gradcheck.Var("x", gradcheck.Rand(rng, 2, 5, 4))},
		func(g *G.ExprGraph, x []*G.Node) (*G.Node, error) { return nn.GELU(x[0]) },
		func(g *G.ExprGraph, x []*G.Node) (*G.Node, error) { return stock.GELU(x[0]) })
}

func TestLayerNormMatchesStockOps(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 3))
	in := []gradcheck.Input{gradcheck.Var("x", gradcheck.Rand(rng, 2, 4, 6)), gradcheck.Var("g", gradcheck.Rand(rng, 1, 6)), gradcheck.Var("b", gradcheck.Rand(rng, 1, 6))}
	gradcheck.Same(t, in,
		func(g *G.ExprGraph, x []*G.Node) (*G.Node, error) { return nn.LayerNorm(x[0], x[1], x[2], 1e-5) },
		func(g *G.ExprGraph, x []*G.Node) (*G.Node, error) { return stock.LayerNorm(x[0], x[1], x[2], 1e-5) })
}

func TestEmbedMatchesStockOps(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 4))
	in := []gradcheck.Input{gradcheck.Const("ids", gradcheck.Ints(4, 0, 4, 2, 1, 1)), gradcheck.Var("wte", gradcheck.Rand(rng, 1, 5, 3)), gradcheck.Var("wpe", gradcheck.Rand(rng, 1, 3, 3))}
	gradcheck.Same(t, in,
		func(g *G.ExprGraph, x []*G.Node) (*G.Node, error) { return nn.Embed(x[0], x[1], x[2], 3, true) },
		func(g *G.ExprGraph, x []*G.Node) (*G.Node, error) { return stock.Embed(x[0], x[1], x[2], 3) })
}

func TestCrossEntropyMatchesStockOps(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 5))
	targets := []int{3, 0, 5, 5}
	in := []gradcheck.Input{
		gradcheck.Var("logits", gradcheck.Rand(rng, 2, 4, 6)),
		gradcheck.Const("targets", gradcheck.Ints(targets...)),
		gradcheck.Const("onehot", oneHot(targets, 6, tensor.Float64)),
	}
	gradcheck.Same(t, in,
		func(g *G.ExprGraph, x []*G.Node) (*G.Node, error) { return nn.CrossEntropy(x[0], x[1]) },
		func(g *G.ExprGraph, x []*G.Node) (*G.Node, error) { return stock.CrossEntropy(x[0], x[2]) })
}

func TestAttentionMatchesStockOps(t *testing.T) {
	const batch, seqLen, heads, d = 2, 4, 2, 8
	rng := rand.New(rand.NewPCG(2, 6))
	for name, c := range inOrder(attentionCases(rng, seqLen, 2)) {
		t.Run(name, func(t *testing.T) {
			cfg := c.config(batch, seqLen, heads)
			gradcheck.Same(t, c.inputs(rng, batch, seqLen, heads, d),
				func(g *G.ExprGraph, x []*G.Node) (*G.Node, error) {
					return nn.AttentionWith(x[0], x[1], x[2], c.extra(x), cfg)
				},
				func(g *G.ExprGraph, x []*G.Node) (*G.Node, error) {
					return stock.AttentionWith(x[0], x[1], x[2], c.extra(x), cfg)
				})
		})
	}
}

// oneHot returns the (n, vocab) one-hot matrix of targets in dtype dt: the input that
// stock.CrossEntropy takes in place of the targets.
func oneHot(targets []int, vocab int, dt tensor.Dtype) *tensor.Dense {
	v := make([]float64, len(targets)*vocab)
	for r, t := range targets {
		v[r*vocab+t] = 1
	}
	if dt == tensor.Float32 {
		f := make([]float32, len(v))
		for i, x := range v {
			f[i] = float32(x)
		}
		return tensor.New(tensor.WithShape(len(targets), vocab), tensor.WithBacking(f))
	}
	return tensor.New(tensor.WithShape(len(targets), vocab), tensor.WithBacking(v))
}

// TestScoreStage: a score stage with no fused kernel (AttentionInputs.Scores) is refused by the
// fused op, and applied by the stock composition to the scores before the mask: doubling them
// there is attention at twice the temperature, which the stock composition with a query scale
// of 2 computes too.
func TestScoreStage(t *testing.T) {
	const batch, seqLen, heads, d = 2, 4, 2, 8
	rng := rand.New(rand.NewPCG(4, 4))
	in := []gradcheck.Input{
		gradcheck.Var("q", gradcheck.Rand(rng, 1, batch*seqLen, d)),
		gradcheck.Var("k", gradcheck.Rand(rng, 1, batch*seqLen, d)),
		gradcheck.Var("v", gradcheck.Rand(rng, 1, batch*seqLen, d)),
	}
	cfg := nn.AttentionConfig{Batch: batch, SeqLen: seqLen, Heads: heads}
	double := func(s *G.Node) (*G.Node, error) { return G.Mul(s, G.NewConstant(2.0)) }
	g := G.NewGraph()
	q := G.NewMatrix(g, G.Float64, G.WithShape(batch*seqLen, d), G.WithName("q"), G.WithValue(in[0].Value))
	if _, err := nn.AttentionWith(q, q, q, nn.AttentionInputs{Scores: double}, cfg); err == nil || !strings.Contains(err.Error(), "stock") {
		t.Errorf("the fused op with a score stage: %v, want a refusal naming the stock ops", err)
	}
	scaled := cfg
	scaled.QueryScale = true
	twos := make([]float64, heads*seqLen)
	for i := range twos {
		twos[i] = 2
	}
	gradcheck.Same(t, in,
		func(g *G.ExprGraph, x []*G.Node) (*G.Node, error) {
			return stock.AttentionWith(x[0], x[1], x[2], nn.AttentionInputs{Scores: double}, cfg)
		},
		func(g *G.ExprGraph, x []*G.Node) (*G.Node, error) {
			scale := G.NewMatrix(g, G.Float64, G.WithShape(heads, seqLen), G.WithName("scale"),
				G.WithValue(tensor.New(tensor.WithShape(heads, seqLen), tensor.WithBacking(twos))))
			return stock.AttentionWith(x[0], x[1], x[2], nn.AttentionInputs{Scale: scale}, scaled)
		})
}
