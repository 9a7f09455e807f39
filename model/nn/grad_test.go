package nn_test

import (
	"math"
	"math/rand/v2"
	"testing"

	G "gorgonia.org/gorgonia"

	"extrapolate/internal/gradcheck"
	"extrapolate/model/nn"
)

func TestLinearGradient(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	gradcheck.Check(t, []gradcheck.Input{
		gradcheck.Var("x", gradcheck.Rand(rng, 1, 5, 3)),
		gradcheck.Var("w", gradcheck.Rand(rng, 1, 3, 4)),
		gradcheck.Var("b", gradcheck.Rand(rng, 1, 4)),
	}, func(g *G.ExprGraph, x []*G.Node) (*G.Node, error) { return nn.Linear(x[0], x[1], x[2]) })
}

func TestAddGradient(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 3))
	// a is used twice, so gorgonia sums two gradients for it.
	gradcheck.Check(t, []gradcheck.Input{
		gradcheck.Var("a", gradcheck.Rand(rng, 1, 4, 3)),
		gradcheck.Var("b", gradcheck.Rand(rng, 1, 4, 3)),
	}, func(g *G.ExprGraph, x []*G.Node) (*G.Node, error) {
		s, err := nn.Add(x[0], x[1])
		if err != nil {
			return nil, err
		}
		return nn.Add(s, x[0])
	})
}

func TestGELUGradient(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 4))
	gradcheck.Check(t, []gradcheck.Input{gradcheck.Var("x", gradcheck.Rand(rng, 2, 6, 5))},
		func(g *G.ExprGraph, x []*G.Node) (*G.Node, error) { return nn.GELU(x[0]) })
}

func TestLayerNormGradient(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 5))
	gradcheck.Check(t, []gradcheck.Input{
		gradcheck.Var("x", gradcheck.Rand(rng, 2, 4, 6)),
		gradcheck.Var("g", gradcheck.Rand(rng, 1, 6)),
		gradcheck.Var("b", gradcheck.Rand(rng, 1, 6)),
	}, func(g *G.ExprGraph, x []*G.Node) (*G.Node, error) { return nn.LayerNorm(x[0], x[1], x[2], 1e-5) })
}

func TestEmbedGradient(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 6))
	ids := gradcheck.Ints(3, 1, 3, 0, 2, 2) // two sequences of three, with repeats
	t.Run("learned", func(t *testing.T) {
		gradcheck.Check(t, []gradcheck.Input{
			gradcheck.Const("ids", ids),
			gradcheck.Var("wte", gradcheck.Rand(rng, 1, 5, 4)),
			gradcheck.Var("wpe", gradcheck.Rand(rng, 1, 4, 4)), // longer than the sequences
		}, func(g *G.ExprGraph, x []*G.Node) (*G.Node, error) { return nn.Embed(x[0], x[1], x[2], 3, true) })
	})
	t.Run("none", func(t *testing.T) {
		gradcheck.Check(t, []gradcheck.Input{
			gradcheck.Const("ids", ids),
			gradcheck.Var("wte", gradcheck.Rand(rng, 1, 5, 4)),
		}, func(g *G.ExprGraph, x []*G.Node) (*G.Node, error) { return nn.Embed(x[0], x[1], nil, 3, false) })
	})
}

func TestCrossEntropyGradient(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 7))
	gradcheck.Check(t, []gradcheck.Input{
		gradcheck.Var("logits", gradcheck.Rand(rng, 2, 5, 7)),
		gradcheck.Const("targets", gradcheck.Ints(0, 6, 3, 3, 1)),
	}, func(g *G.ExprGraph, x []*G.Node) (*G.Node, error) { return nn.CrossEntropy(x[0], x[1]) })
}

// randomPositions returns a rotation by arbitrary angles with a scale, and a random bias: the
// backward pass must invert whatever tables a scheme supplies.
func randomPositions(rng *rand.Rand, seqLen, pairs, heads int, interleaved bool) nn.Positions {
	p := nn.Positions{Pairs: pairs, Interleaved: interleaved}
	for i := 0; i < seqLen*pairs; i++ {
		a := 2 * math.Pi * rng.Float64()
		p.Cos = append(p.Cos, 1.3*math.Cos(a))
		p.Sin = append(p.Sin, 1.3*math.Sin(a))
	}
	for h := 0; h < heads; h++ {
		row := make([]float64, seqLen)
		for d := range row {
			row[d] = rng.NormFloat64()
		}
		p.Bias = append(p.Bias, row)
	}
	return p
}

func TestAttentionGradient(t *testing.T) {
	const batch, seqLen, heads, d = 2, 5, 2, 12
	rng := rand.New(rand.NewPCG(1, 8))
	cases := map[string]nn.Positions{
		"none":        {},
		"rotate-half": randomPositions(rng, seqLen, 3, heads, false),
		"interleaved": randomPositions(rng, seqLen, 3, heads, true),
		"partial":     randomPositions(rng, seqLen, 2, heads, false),
	}
	cases["bias"] = nn.Positions{Bias: randomPositions(rng, seqLen, 0, heads, false).Bias}
	for name, pos := range cases {
		t.Run(name, func(t *testing.T) {
			cfg := nn.AttentionConfig{Batch: batch, SeqLen: seqLen, Heads: heads, Positions: pos}
			gradcheck.Check(t, []gradcheck.Input{
				gradcheck.Var("q", gradcheck.Rand(rng, 1, batch*seqLen, d)),
				gradcheck.Var("k", gradcheck.Rand(rng, 1, batch*seqLen, d)),
				gradcheck.Var("v", gradcheck.Rand(rng, 1, batch*seqLen, d)),
			}, func(g *G.ExprGraph, x []*G.Node) (*G.Node, error) { return nn.Attention(x[0], x[1], x[2], cfg) })
		})
	}
}
