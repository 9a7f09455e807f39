package nn_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	G "gorgonia.org/gorgonia"

	"extrapolate/internal/gradcheck"
	"extrapolate/model/nn"
	"extrapolate/model/nn/stock"
)

// TestSoftpickGolden checks the weights on four tokens whose scores are set by hand against those
// of the reference's softpick with the causal mask, computed apart in PyTorch by
// testdata/softpick_golden.py: row 0 (score ½) takes a hair less than 1, the ε in the sum; rows 1
// and 2 give their keys with a score of at most 0 nothing, and row 1's weights sum to 0.91; the
// entries past the diagonal hold 9, which must count for nothing.
func TestSoftpickGolden(t *testing.T) {
	const n, heads, hd = 4, 2, 4
	z := [][]float64{{0.5, 9, 9, 9}, {-1, 2, 9, 9}, {0.3, -0.2, 0, 9}, {1.5, -3, 0.7, -0.4}}
	want := [][]float64{ // softpick_golden.py
		{0.99999997458505985, 0, 0, 0},
		{0, 0.90996941725314051, 0, 0},
		{0.65870894169772354, 0, 0, 0},
		{0.60285494196231337, 0, 0.17553142089362711, 0},
	}
	q, k, v := stickInputs(z, heads, hd)
	cfg := nn.AttentionConfig{Batch: 1, SeqLen: n, Heads: heads, Softpick: true}
	for _, train := range []bool{true, false} {
		got, _, err := runOp([5][]float64{q, k, v}, cfg, heads*hd, 2, train)
		if err != nil {
			t.Fatal(err)
		}
		got32, _ := runAttention(t, attnInputs{q: to32(q), k: to32(k), v: to32(v)}, cfg, heads*hd, train)
		for h := range heads {
			for i := range n {
				for j := range n {
					w, x := want[i][j], i*heads*hd+h*hd+j
					if g := got[x]; math.Abs(g-w) > 1e-15 {
						t.Errorf("training %v: head %d y[%d][%d] = %v, want %v", train, h, i, j, g, w)
					}
					if g := float64(got32[x]); math.Abs(g-w) > 1e-7 {
						t.Errorf("float32, training %v: head %d y[%d][%d] = %v, want %v", train, h, i, j, g, w)
					}
				}
			}
		}
	}
}

// TestSoftpickGradient checks the gradients of softpick attention against finite differences in
// float64, with every input attention takes that softpick does: rotations, biases and query
// scales, learned or not, with and without a window.
func TestSoftpickGradient(t *testing.T) {
	const batch, seqLen, heads, d = 2, 5, 2, 12
	rng := rand.New(rand.NewPCG(7, 9))
	cases := attentionCases(rng, seqLen, 3)
	// In name order (inOrder): a row whose scores all lie within about 10⁻⁴ of 0 is in ε's
	// regime, where y = S/(S + ε) curves so fast that a finite difference of step 10⁻⁶ is off
	// by 10⁻⁵.
	for name, c := range inOrder(cases) {
		if c.forget || c.cope > 0 {
			continue // refused (TestSoftpickRefuses)
		}
		for _, w := range []int{0, 2} {
			t.Run(fmt.Sprintf("%s/w%d", name, w), func(t *testing.T) {
				cfg := c.config(batch, seqLen, heads)
				cfg.Softpick, cfg.Window = true, w
				gradcheck.Check(t, c.inputs(rng, batch, seqLen, heads, d), func(g *G.ExprGraph, x []*G.Node) (*G.Node, error) {
					return nn.AttentionWith(x[0], x[1], x[2], c.extra(x), cfg)
				})
			})
		}
	}
}

// TestSoftpickMatchesStockOps checks values and gradients against softpick written with
// gorgonia's stock ops as the reference's naive softpick writes it (stock.AttentionWith), whose
// gradient, gorgonia's, passes through the row's maximum as PyTorch's does the reference's, with and without a window.
func TestSoftpickMatchesStockOps(t *testing.T) {
	const batch, seqLen, heads, d = 2, 4, 2, 8
	rng := rand.New(rand.NewPCG(5, 7))
	for name, c := range inOrder(attentionCases(rng, seqLen, 2)) {
		if c.forget || c.cope > 0 {
			continue
		}
		for _, w := range []int{0, 2} {
			t.Run(fmt.Sprintf("%s/w%d", name, w), func(t *testing.T) {
				cfg := c.config(batch, seqLen, heads)
				cfg.Softpick, cfg.Window = true, w
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
}

// softpickDefinition is query i's output in head h, and the entropy, far mass and first-key
// weight of its weights,
// from the formula in float64, without the shift by the maximum: y_j = ReLU(e^{x_j} − 1) /
// (Σ|e^{x_k} − 1| + ε·e^{m}), the reference's ε carried to the unshifted scale.
func softpickDefinition(in attnInputs, heads, d, far, i, h int) (out []float64, ent, farMass, first float64) {
	hd := d / heads
	x := make([]float64, i+1)
	m := math.Inf(-1)
	for j := range x {
		var dot float64
		for c := 0; c < hd; c++ {
			dot += float64(in.q[i*d+h*hd+c]) * float64(in.k[j*d+h*hd+c])
		}
		x[j] = dot / math.Sqrt(float64(hd))
		m = math.Max(m, x[j])
	}
	var sum float64
	for _, s := range x {
		sum += math.Abs(math.Expm1(s))
	}
	den := sum + 1e-8*math.Exp(m)
	out = make([]float64, hd)
	for j, s := range x {
		y := math.Max(math.Expm1(s), 0) / den
		if y > 0 {
			ent -= y * math.Log(y)
		}
		if i-j >= far {
			farMass += y
		}
		if j == 0 {
			first = y
		}
		for c := range out {
			out[c] += y * float64(in.v[j*d+h*hd+c])
		}
	}
	return out, ent, farMass, first
}

// TestSoftpickEvaluation checks evaluation, on its one-tile path and on its online path over two
// tiles of keys (3000 positions), and training's forward pass, against the definition: the
// output, its entropy and its far mass.
func TestSoftpickEvaluation(t *testing.T) {
	const heads, d, far = 2, 8, 5
	hd := d / heads
	for _, n := range []int{7, 300, 3000} {
		if n > 2048 && testing.Short() {
			continue
		}
		for _, train := range []bool{false, true} {
			if train && n > 300 {
				continue
			}
			t.Run(fmt.Sprintf("n%d/train%v", n, train), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(uint64(n), 3))
				in := attnInputs{q: randFloat32(rng, n*d, 1), k: randFloat32(rng, n*d, 1), v: randFloat32(rng, n*d, 1)}
				cfg := nn.AttentionConfig{Batch: 1, SeqLen: n, Heads: heads, Softpick: true}
				got, st := runAttention(t, in, cfg, d, train)
				var worst, worstStat float64
				for h := range heads {
					for _, i := range []int{0, 1, n / 2, n - 1, min(n-1, 2047), min(n-1, 2048), min(n-1, 2500)} {
						out, ent, farMass, first := softpickDefinition(in, heads, d, far, i, h)
						for c, want := range out {
							worst = math.Max(worst, math.Abs(float64(got[i*d+h*hd+c])-want))
						}
						worstStat = math.Max(worstStat, math.Abs(st.Entropy[h*n+i]-ent))
						worstStat = math.Max(worstStat, math.Abs(st.FarMass[h*n+i]-farMass))
						worstStat = math.Max(worstStat, math.Abs(st.First[h*n+i]-first))
					}
				}
				if worst > 2e-6 || worstStat > 2e-5 {
					t.Errorf("largest differences from the definition: output %.3g, entropy, far mass or first-key weight %.3g", worst, worstStat)
				}
			})
		}
	}
}

// TestSoftpickMasked checks softpick on the masked path, where evaluation goes with a window or
// a remap, against the reference's softpick over the keys each query sees (reference.row): a
// sliding window in training and evaluation, and ReRoPE's and StreamingLLM's remaps in
// evaluation, on one tile of keys and across several, with a bias by distance. It fails if the
// sum of |u| runs over keys a query does not see, or if a row's spans in one tile are folded
// against different maxima.
func TestSoftpickMasked(t *testing.T) {
	checkMaskedPath(t, 20, nil, func(c *nn.AttentionConfig, r *reference) { c.Softpick, r.softpick = true, true })
}

// TestSoftpickRefuses: forget gates' and CoPE's backward passes count on the softmax;
// stick-breaking is another normaliser.
func TestSoftpickRefuses(t *testing.T) {
	base := nn.AttentionConfig{Batch: 1, SeqLen: 4, Heads: 1, Softpick: true}
	for _, c := range []struct {
		name string
		edit func(*nn.AttentionConfig)
		want string
	}{
		{"stick-breaking", func(c *nn.AttentionConfig) { c.StickBreaking = true }, "stick-breaking"},
		{"forget gates", func(c *nn.AttentionConfig) { c.LogForget = true }, "forget gates"},
	} {
		cfg := base
		c.edit(&cfg)
		var logf []float64
		if cfg.LogForget {
			logf = make([]float64, 4)
		}
		_, _, err := runOpForget([5][]float64{make([]float64, 4), make([]float64, 4), make([]float64, 4)}, logf, cfg, 1, 2, false)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error naming %s", c.name, err, c.want)
		}
	}
}
