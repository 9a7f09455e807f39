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
	"extrapolate/model/nn/stock"
)

// runSinks runs the op with sink logits once, as training runs it or as evaluation does, in
// float64, and returns its output and statistics.
func runSinks(t *testing.T, q, k, v, sinks []float64, cfg nn.AttentionConfig, d int, train bool) ([]float64, *nn.AttentionStats) {
	t.Helper()
	g := G.NewGraph()
	n := cfg.Batch * cfg.SeqLen
	node := func(name string, x []float64, shape ...int) *G.Node {
		val := tensor.New(tensor.WithShape(shape...), tensor.WithBacking(append([]float64(nil), x...)))
		return G.NewTensor(g, tensor.Float64, len(shape), G.WithShape(shape...), G.WithName(name), G.WithValue(val))
	}
	st := &nn.AttentionStats{Far: 5}
	cfg.Stats = st
	out, err := nn.AttentionWith(node("q", q, n, d), node("k", k, n, d), node("v", v, n, d),
		nn.AttentionInputs{Sinks: node("sinks", sinks, cfg.Heads)}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if train {
		if _, err := G.Grad(G.Must(G.Sum(out)), g.AllNodes()[0]); err != nil {
			t.Fatal(err)
		}
	}
	vm := G.NewTapeMachine(g)
	defer vm.Close()
	if err := vm.RunAll(); err != nil {
		t.Fatal(err)
	}
	return append([]float64(nil), out.Value().Data().([]float64)...), st
}

// TestSinksGolden checks the weights on four tokens whose scores are set by hand, in two heads
// with sinks ½ and −1, against Hugging Face's gpt_oss attention computed apart in PyTorch
// (testdata/sinks_golden.py): row 0 of head 0, a score of ½ against a sink of ½, gives its key
// exactly ½; every row's weights sum to less than 1, the sink's share going to no value.
func TestSinksGolden(t *testing.T) {
	const n, heads, hd = 4, 2, 4
	z := [][]float64{{0.5, 9, 9, 9}, {-1, 2, 9, 9}, {0.3, -0.2, 0, 9}, {1.5, -3, 0.7, -0.4}}
	want := [2][][]float64{{ // sinks_golden.py
		{0.5, 0, 0, 0},
		{0.039112573270687456, 0.78559703458927588, 0, 0},
		{0.28021002896268726, 0.16995597372483484, 0.20758469507331062, 0},
		{0.50559030669995941, 0.005616600966898715, 0.2271763687772011, 0.075620444065461506},
	}, {
		{0.81757447619364365, 0, 0, 0},
		{0.045278500743629067, 0.90944299851274191, 0, 0},
		{0.38169677349900238, 0.23151079584053352, 0.28276792458348365, 0},
		{0.590984561772535, 0.0065652454508857375, 0.2655464809505233, 0.088392744886212141},
	}}
	q, k, v := stickInputs(z, heads, hd)
	cfg := nn.AttentionConfig{Batch: 1, SeqLen: n, Heads: heads, Sinks: true}
	for _, train := range []bool{true, false} {
		got, _ := runSinks(t, q, k, v, []float64{0.5, -1}, cfg, heads*hd, train)
		for h := range heads {
			for i := range n {
				for j := range n {
					if g, w := got[i*heads*hd+h*hd+j], want[h][i][j]; math.Abs(g-w) > 1e-15 {
						t.Errorf("training %v: head %d p[%d][%d] = %v, want %v", train, h, i, j, g, w)
					}
				}
			}
		}
	}
}

// TestSinksGradient checks the gradients of attention with sinks against finite differences in
// float64, the sink logits' included, with every input the sinks take, with and without a
// sliding window.
func TestSinksGradient(t *testing.T) {
	const batch, seqLen, heads, d = 2, 5, 2, 12
	rng := rand.New(rand.NewPCG(6, 9))
	for name, c := range inOrder(attentionCases(rng, seqLen, 3)) {
		if c.forget || c.cope > 0 {
			continue // refused
		}
		for _, w := range []int{0, 2} {
			t.Run(fmt.Sprintf("%s/w%d", name, w), func(t *testing.T) {
				cfg := c.config(batch, seqLen, heads)
				cfg.Sinks, cfg.Window = true, w
				in := append(c.inputs(rng, batch, seqLen, heads, d), gradcheck.Var("sinks", gradcheck.Rand(rng, 1, heads)))
				gradcheck.Check(t, in, func(g *G.ExprGraph, x []*G.Node) (*G.Node, error) {
					extra := c.extra(x[:len(x)-1])
					extra.Sinks = x[len(x)-1]
					return nn.AttentionWith(x[0], x[1], x[2], extra, cfg)
				})
			})
		}
	}
}

// TestSinksMatchesStockOps checks values and gradients against the sinks written with
// gorgonia's stock ops as Hugging Face's gpt_oss writes them (a column appended after the mask,
// the softmax, the column dropped), differentiated by gorgonia, with and without a window.
func TestSinksMatchesStockOps(t *testing.T) {
	const batch, seqLen, heads, d = 2, 4, 2, 8
	rng := rand.New(rand.NewPCG(6, 7))
	for name, c := range inOrder(attentionCases(rng, seqLen, 2)) {
		if c.forget || c.cope > 0 {
			continue
		}
		for _, w := range []int{0, 2} {
			t.Run(fmt.Sprintf("%s/w%d", name, w), func(t *testing.T) {
				cfg := c.config(batch, seqLen, heads)
				cfg.Sinks, cfg.Window = true, w
				in := append(c.inputs(rng, batch, seqLen, heads, d), gradcheck.Var("sinks", gradcheck.Rand(rng, 1, heads)))
				with := func(x []*G.Node) nn.AttentionInputs {
					extra := c.extra(x[:len(x)-1])
					extra.Sinks = x[len(x)-1]
					return extra
				}
				gradcheck.Same(t, in,
					func(g *G.ExprGraph, x []*G.Node) (*G.Node, error) {
						return nn.AttentionWith(x[0], x[1], x[2], with(x), cfg)
					},
					func(g *G.ExprGraph, x []*G.Node) (*G.Node, error) {
						return stock.AttentionWith(x[0], x[1], x[2], with(x), cfg)
					})
			})
		}
	}
}

// TestSinksEvaluation checks evaluation on one tile and over two (3000 positions), and training's
// forward pass, against the definition in float64: p_ij = e^{x_ij}/(Σ_k e^{x_ik} + e^{s_h}), its
// entropy over the keys and the sink, and its mass on far keys.
func TestSinksEvaluation(t *testing.T) {
	const heads, hd, far = 2, 4, 5
	d := heads * hd
	for _, n := range []int{7, 300, 3000} {
		if n > 2048 && testing.Short() {
			continue
		}
		for _, train := range []bool{false, true} {
			if train && n > 300 {
				continue
			}
			t.Run(fmt.Sprintf("n%d/train%v", n, train), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(uint64(n), 4))
				rnd := func(k int) []float64 {
					x := make([]float64, k)
					for i := range x {
						x[i] = rng.NormFloat64()
					}
					return x
				}
				q, k, v := rnd(n*d), rnd(n*d), rnd(n*d)
				sinks := []float64{1.5, -0.5}
				got, st := runSinks(t, q, k, v, sinks, nn.AttentionConfig{Batch: 1, SeqLen: n, Heads: heads, Sinks: true}, d, train)
				var worst, worstStat float64
				for h := range heads {
					for _, i := range []int{0, 1, n / 2, n - 1, min(n-1, 2047), min(n-1, 2048)} {
						x := make([]float64, i+1)
						m := sinks[h]
						for j := range x {
							for c := 0; c < hd; c++ {
								x[j] += q[i*d+h*hd+c] * k[j*d+h*hd+c]
							}
							x[j] /= math.Sqrt(hd)
							m = math.Max(m, x[j])
						}
						z := math.Exp(sinks[h] - m)
						for _, s := range x {
							z += math.Exp(s - m)
						}
						ps := math.Exp(sinks[h]-m) / z
						ent, farMass := -ps*math.Log(ps), 0.0
						for c := 0; c < hd; c++ {
							var o float64
							for j, s := range x {
								o += math.Exp(s-m) / z * v[j*d+h*hd+c]
							}
							worst = math.Max(worst, math.Abs(got[i*d+h*hd+c]-o))
						}
						for j, s := range x {
							p := math.Exp(s-m) / z
							ent -= p * math.Log(p)
							if i-j >= far {
								farMass += p
							}
						}
						worstStat = math.Max(worstStat, math.Abs(st.Entropy[h*n+i]-ent))
						worstStat = math.Max(worstStat, math.Abs(st.FarMass[h*n+i]-farMass))
						worstStat = math.Max(worstStat, math.Abs(st.First[h*n+i]-math.Exp(x[0]-m)/z))
					}
				}
				if worst > 1e-12 || worstStat > 1e-10 {
					t.Errorf("largest differences from the definition: output %.3g, entropy, far mass or first-key weight %.3g", worst, worstStat)
				}
			})
		}
	}
}

// TestSinksMasked checks sinks on the masked path, where evaluation goes with a window or a
// remap, against the definition with the sink's term in each row's softmax (reference.row): a
// sliding window (gpt-oss's banded layers) in training and evaluation, and ReRoPE's and
// StreamingLLM's remaps in evaluation, on one tile of keys and across several.
func TestSinksMasked(t *testing.T) {
	sinkLogits := []float64{1.5, -0.5}
	checkMaskedPath(t, 10, sinkLogits, func(c *nn.AttentionConfig, r *reference) { c.Sinks, r.sinks = true, sinkLogits })
}
