package nn_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"extrapolate/internal/gradcheck"
	"extrapolate/model/nn"
)

// Attention at drawn position ids: five tokens at positions 0, 2, 3, 6 and 8 of nine, gaps of
// every size from 1 to 3, so that a wrong row or distance shows.
var (
	testIDs   = []int{0, 2, 3, 6, 8}
	testRange = 9
)

// idsCases are the ways of calling attention at ids that the gradient checks cover: a rotation
// (queries' and keys' tables apart, as xPos), a learned bias by distance, a learned bias per
// query, and everything at once with a learned query scale.
func idsCases(rng *rand.Rand, positions, pairs int) map[string]attentionCase {
	return map[string]attentionCase{
		"key rotation":        {pos: withKeys(rng, randomPositions(rng, positions, pairs, true))},
		"learned by distance": {form: nn.ByDistance, learn: true},
		"learned per query":   {form: nn.PerQuery, learn: true},
		"everything learned":  {pos: randomPositions(rng, positions, pairs, false), form: nn.ByDistance, learn: true, scale: true, learnScale: true},
		"rotation, per query": {pos: randomPositions(rng, positions, pairs-1, false), form: nn.PerQuery, learn: true, scale: true},
	}
}

func (c attentionCase) configAt(batch, seqLen, heads int, ids []int, positions int) nn.AttentionConfig {
	cfg := c.config(batch, seqLen, heads)
	cfg.PositionIDs, cfg.PositionRange = ids, positions
	return cfg
}

func attentionOf(c attentionCase, cfg nn.AttentionConfig) gradcheck.Builder {
	return func(g *G.ExprGraph, x []*G.Node) (*G.Node, error) {
		return nn.AttentionWith(x[0], x[1], x[2], c.extra(x), cfg)
	}
}

// TestAttentionGradientAtIDs checks the gradient of attention at drawn ids against finite
// differences, float64: q, k and v through the rotation at the ids' rows, and the learned bias
// at the entries the ids read.
func TestAttentionGradientAtIDs(t *testing.T) {
	const batch, heads, d = 2, 2, 12
	rng := rand.New(rand.NewPCG(3, 8))
	for name, c := range idsCases(rng, testRange, 3) {
		t.Run(name, func(t *testing.T) {
			cfg := c.configAt(batch, len(testIDs), heads, testIDs, testRange)
			gradcheck.Check(t, c.inputsOver(rng, batch, len(testIDs), testRange, heads, d), attentionOf(c, cfg))
		})
	}
}

// gathered is the call without ids that means what c means at ids: the rotation's rows at the
// ids, and the bias at the ids' pairs as a bias per query of the sequence's length.
func gathered(c attentionCase, in []gradcheck.Input, ids []int, positions, heads int) (attentionCase, []gradcheck.Input) {
	n := len(ids)
	rows := func(tab []float64) []float64 {
		if tab == nil {
			return nil
		}
		p := len(tab) / positions
		var out []float64
		for _, id := range ids {
			out = append(out, tab[id*p:(id+1)*p]...)
		}
		return out
	}
	g := c
	g.pos.Cos, g.pos.Sin, g.pos.KeyCos, g.pos.KeySin = rows(c.pos.Cos), rows(c.pos.Sin), rows(c.pos.KeyCos), rows(c.pos.KeySin)
	out := append([]gradcheck.Input(nil), in...)
	if c.form == nn.NoBias {
		return g, out
	}
	g.form = nn.PerQuery
	b := in[3].Value.Data().([]float64)
	pq := make([]float64, heads*n*n)
	for h := 0; h < heads; h++ {
		for i := 0; i < n; i++ {
			for j := 0; j <= i; j++ {
				if c.form == nn.ByDistance {
					pq[(h*n+i)*n+j] = b[h*positions+ids[i]-ids[j]]
				} else {
					pq[(h*n+i)*n+j] = b[(h*positions+ids[i])*positions+ids[j]]
				}
			}
		}
	}
	out[3] = gradcheck.Input{Name: "bias", Value: tensor.New(tensor.WithShape(heads, n, n), tensor.WithBacking(pq)), Diff: in[3].Diff}
	return g, out
}

// TestAttentionAtIDsIsGathered checks what the ids mean, in float64: attention at ids gives the
// output of attention without ids over the rotation's rows at the ids and the bias at the ids'
// pairs (per query), and the same gradients of q, k, v and the query scale; a learned bias's
// gradient is the per-query one summed into the entries the pairs read. Evaluation's tiled pass
// at the ids gives the same output.
func TestAttentionAtIDsIsGathered(t *testing.T) {
	const batch, heads, d = 2, 2, 12
	n := len(testIDs)
	rng := rand.New(rand.NewPCG(3, 9))
	for name, c := range idsCases(rng, testRange, 3) {
		t.Run(name, func(t *testing.T) {
			in := c.inputsOver(rng, batch, n, testRange, heads, d)
			at := gradcheck.New(t, in, attentionOf(c, c.configAt(batch, n, heads, testIDs, testRange)))
			gc, gin := gathered(c, in, testIDs, testRange, heads)
			ref := gradcheck.New(t, gin, attentionOf(gc, gc.config(batch, n, heads)))
			if a, b := at.Run(t), ref.Run(t); !near(a, b) {
				t.Fatalf("cost %.15g, gathered %.15g", a, b)
			}
			// Evaluation, which is not differentiated, takes the tiled path at the ids.
			eval := gradcheck.New(t, constants(in), attentionOf(c, c.configAt(batch, n, heads, testIDs, testRange)))
			evalRef := gradcheck.New(t, constants(gin), attentionOf(gc, gc.config(batch, n, heads)))
			eval.Run(t)
			evalRef.Run(t)
			for e, x := range eval.Output.Value().Data().([]float64) {
				if y := evalRef.Output.Value().Data().([]float64)[e]; !near(x, y) {
					t.Fatalf("evaluation's output[%d] %.15g, gathered %.15g", e, x, y)
				}
			}
			ga, gr := at.Analytic(), ref.Analytic()
			for gi, i := range at.WRT {
				want := gr[gi]
				if in[i].Name == "bias" {
					want = fold(want, c.form, testIDs, testRange, heads)
				}
				for e := range ga[gi] {
					if !near(ga[gi][e], want[e]) {
						t.Fatalf("gradient of %s[%d]: %.15g, gathered %.15g", in[i].Name, e, ga[gi][e], want[e])
					}
				}
			}
		})
	}
}

// constants are the inputs, none differentiated.
func constants(in []gradcheck.Input) []gradcheck.Input {
	var out []gradcheck.Input
	for _, x := range in {
		out = append(out, gradcheck.Const(x.Name, x.Value))
	}
	return out
}

// fold sums a per-query bias's gradient (heads, n, n) into the entries of a bias over positions
// that ids read: by distance, or per pair of positions.
func fold(g []float64, form nn.BiasForm, ids []int, positions, heads int) []float64 {
	n := len(ids)
	size := heads * positions
	if form == nn.PerQuery {
		size *= positions
	}
	out := make([]float64, size)
	for h := 0; h < heads; h++ {
		for i := 0; i < n; i++ {
			for j := 0; j <= i; j++ {
				x := g[(h*n+i)*n+j]
				if form == nn.ByDistance {
					out[h*positions+ids[i]-ids[j]] += x
				} else {
					out[(h*positions+ids[i])*positions+ids[j]] += x
				}
			}
		}
	}
	return out
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-12*math.Max(1, math.Abs(b)) }

// TestAttentionAtZeroIDsIsDefault gives the op the ids 0..n−1 explicitly, over the sequence's
// length and over a longer range whose extra rows and distances no token reads: the output and
// every gradient are the op's without ids to the bit, the bias's gradient zero past n.
func TestAttentionAtZeroIDsIsDefault(t *testing.T) {
	const batch, n, heads, d = 2, 6, 2, 12
	ids := []int{0, 1, 2, 3, 4, 5}
	for _, positions := range []int{n, n + 3} {
		rng := rand.New(rand.NewPCG(3, 10))
		for name, c := range idsCases(rng, positions, 3) {
			t.Run(fmt.Sprintf("%s over %d", name, positions), func(t *testing.T) {
				in := c.inputsOver(rng, batch, n, positions, heads, d)
				at := gradcheck.New(t, in, attentionOf(c, c.configAt(batch, n, heads, ids, positions)))
				short, sin := gathered(c, in, ids, positions, heads)
				if c.form == nn.ByDistance { // the bias by distance, cut to n distances
					short.form = nn.ByDistance
					b := in[3].Value.Data().([]float64)
					var cut []float64
					for h := 0; h < heads; h++ {
						cut = append(cut, b[h*positions:h*positions+n]...)
					}
					sin[3] = gradcheck.Var("bias", tensor.New(tensor.WithShape(heads, n), tensor.WithBacking(cut)))
				}
				ref := gradcheck.New(t, sin, attentionOf(short, short.config(batch, n, heads)))
				if a, b := at.Run(t), ref.Run(t); a != b {
					t.Fatalf("cost %v, without ids %v", a, b)
				}
				ga, gr := at.Analytic(), ref.Analytic()
				for gi, i := range at.WRT {
					want := gr[gi]
					if in[i].Name == "bias" {
						want = widen(want, c.form, n, positions, heads)
					}
					for e := range ga[gi] {
						if ga[gi][e] != want[e] {
							t.Fatalf("gradient of %s[%d]: %v, without ids %v", in[i].Name, e, ga[gi][e], want[e])
						}
					}
				}
			})
		}
	}
}

// widen lays a bias's gradient over n positions out over more, zero where n has none.
func widen(g []float64, form nn.BiasForm, n, positions, heads int) []float64 {
	if form == nn.ByDistance {
		out := make([]float64, heads*positions)
		for h := 0; h < heads; h++ {
			copy(out[h*positions:], g[h*n:(h+1)*n])
		}
		return out
	}
	out := make([]float64, heads*positions*positions)
	for h := 0; h < heads; h++ {
		for i := 0; i < n; i++ {
			copy(out[(h*positions+i)*positions:], g[(h*n+i)*n:(h*n+i+1)*n])
		}
	}
	return out
}

// TestAttentionRefusesBadIDs checks that ids the op cannot take fail the pass, not a lookup.
func TestAttentionRefusesBadIDs(t *testing.T) {
	const batch, n, heads, d = 1, 3, 1, 4
	for name, ids := range map[string][]int{"repeated": {0, 2, 2}, "decreasing": {0, 3, 1}, "past the range": {0, 1, 5}, "negative": {-1, 0, 1}} {
		t.Run(name, func(t *testing.T) {
			c := attentionCase{form: nn.ByDistance}
			rng := rand.New(rand.NewPCG(3, 11))
			h := gradcheck.New(t, c.inputsOver(rng, batch, n, 5, heads, d), attentionOf(c, c.configAt(batch, n, heads, ids, 5)))
			if err := h.RunErr(); err == nil {
				t.Fatalf("ids %v ran", ids)
			}
		})
	}
}

// TestEmbedGradientAtPositions checks the embedding's gradient with its tokens at drawn
// positions against finite differences: the table's rows at the positions get the sums of
// their tokens' gradients, the others none.
func TestEmbedGradientAtPositions(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 12))
	gradcheck.Check(t, []gradcheck.Input{
		gradcheck.Const("ids", gradcheck.Ints(3, 1, 3, 0, 2, 2)),
		gradcheck.Var("wte", gradcheck.Rand(rng, 1, 5, 4)),
		gradcheck.Var("wpe", gradcheck.Rand(rng, 1, 7, 4)),
	}, func(g *G.ExprGraph, x []*G.Node) (*G.Node, error) {
		return nn.EmbedAt(x[0], x[1], x[2], 3, true, []int{1, 4, 6})
	})
}

// TestEmbedAtPositions checks what the positions mean: token t of every sequence gets row
// at[t] of the table, and the ids 0..n−1 give Embed's output and gradients to the bit.
func TestEmbedAtPositions(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 13))
	in := []gradcheck.Input{
		gradcheck.Const("ids", gradcheck.Ints(3, 1, 3, 0, 2, 2)),
		gradcheck.Var("wte", gradcheck.Rand(rng, 1, 5, 4)),
		gradcheck.Var("wpe", gradcheck.Rand(rng, 1, 7, 4)),
	}
	at := []int{1, 4, 6}
	h := gradcheck.New(t, in, func(g *G.ExprGraph, x []*G.Node) (*G.Node, error) { return nn.EmbedAt(x[0], x[1], x[2], 3, true, at) })
	h.Run(t)
	out := h.Output.Value().Data().([]float64)
	wte, wpe := in[1].Value.Data().([]float64), in[2].Value.Data().([]float64)
	for r, id := range []int{3, 1, 3, 0, 2, 2} {
		for i := 0; i < 4; i++ {
			if want := wte[id*4+i] + wpe[at[r%3]*4+i]; out[r*4+i] != want {
				t.Fatalf("row %d[%d]: %v, want wte[%d] + wpe[%d] = %v", r, i, out[r*4+i], id, at[r%3], want)
			}
		}
	}
	zero := gradcheck.New(t, in, func(g *G.ExprGraph, x []*G.Node) (*G.Node, error) {
		return nn.EmbedAt(x[0], x[1], x[2], 3, true, []int{0, 1, 2})
	})
	plain := gradcheck.New(t, in, func(g *G.ExprGraph, x []*G.Node) (*G.Node, error) { return nn.Embed(x[0], x[1], x[2], 3, true) })
	if a, b := zero.Run(t), plain.Run(t); a != b {
		t.Fatalf("cost %v at 0, 1, 2; Embed's %v", a, b)
	}
	ga, gp := zero.Analytic(), plain.Analytic()
	for gi := range ga {
		for e := range ga[gi] {
			if ga[gi][e] != gp[gi][e] {
				t.Fatalf("gradient %d[%d]: %v at 0, 1, 2; Embed's %v", gi, e, ga[gi][e], gp[gi][e])
			}
		}
	}
}
