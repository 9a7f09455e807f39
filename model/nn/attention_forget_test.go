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

// TestForgetGolden checks the forget gates' bias on a sequence small enough to write out. With
// q = k = 0 every score is its bias D_ij = Σ_{l=j+1..i} log f_l alone, so p_ij ∝ Π_{l=j+1..i} f_l,
// and with v_j the j-th unit vector the output's row i is p_i. Head 0 of sequence 0 has gates
// (0.3, ½, ¼, 1): f_0 enters no sum, and
//
//	row 1: D = (log ½, 0)                 → (½, 1)/(3/2)          = (1/3, 2/3)
//	row 2: D = (log ⅛, log ¼, 0)          → (⅛, ¼, 1)/(11/8)      = (1/11, 2/11, 8/11)
//	row 3: D = (log ⅛, log ¼, 0, 0)       → (⅛, ¼, 1, 1)/(19/8)   = (1/19, 2/19, 8/19, 8/19)
//
// head 1 has every gate open (f = 1), plain attention over equal scores; sequence 1's head 0 has
// gates (1, 1, ¼, ½): row 2 (¼, ¼, 1)/(3/2), row 3 (⅛, ⅛, ½, 1)/(7/4). Training's and
// evaluation's forward passes, in float64 and float32, must give these, and the gradient of
// f_0, which enters no sum, must be 0 exactly.
func TestForgetGolden(t *testing.T) {
	const batch, n, heads, hd = 2, 4, 2, 4
	const d = heads * hd
	gates := [batch][heads][n]float64{{{0.3, 0.5, 0.25, 1}, {1, 1, 1, 1}}, {{1, 1, 0.25, 0.5}, {1, 1, 1, 1}}}
	want := [batch][heads][n][n]float64{
		{
			{{1}, {1. / 3, 2. / 3}, {1. / 11, 2. / 11, 8. / 11}, {1. / 19, 2. / 19, 8. / 19, 8. / 19}},
			{{1}, {1. / 2, 1. / 2}, {1. / 3, 1. / 3, 1. / 3}, {1. / 4, 1. / 4, 1. / 4, 1. / 4}},
		},
		{
			{{1}, {1. / 2, 1. / 2}, {1. / 6, 1. / 6, 2. / 3}, {1. / 14, 1. / 14, 2. / 7, 4. / 7}},
			{{1}, {1. / 2, 1. / 2}, {1. / 3, 1. / 3, 1. / 3}, {1. / 4, 1. / 4, 1. / 4, 1. / 4}},
		},
	}
	q, v := make([]float64, batch*n*d), make([]float64, batch*n*d)
	logf := make([]float64, batch*n*heads)
	for b := range batch {
		for j := range n {
			for h := range heads {
				v[(b*n+j)*d+h*hd+j] = 1
				logf[(b*n+j)*heads+h] = math.Log(gates[b][h][j])
			}
		}
	}
	cfg := nn.AttentionConfig{Batch: batch, SeqLen: n, Heads: heads, LogForget: true}
	check := func(what string, got []float64, tol float64) {
		t.Helper()
		for b := range batch {
			for h := range heads {
				for i := range n {
					for j := range n {
						if g, w := got[(b*n+i)*d+h*hd+j], want[b][h][i][j]; math.Abs(g-w) > tol {
							t.Errorf("%s: sequence %d head %d: p[%d][%d] = %v, want %v", what, b, h, i, j, g, w)
						}
					}
				}
			}
		}
	}
	for _, train := range []bool{true, false} {
		got, _, err := runOpForget([5][]float64{q, q, v}, logf, cfg, d, 2, train)
		if err != nil {
			t.Fatal(err)
		}
		check(fmt.Sprintf("float64, training %v", train), got, 1e-15)
		got32, _ := runAttention(t, attnInputs{q: to32(q), k: to32(q), v: to32(v), logf: to32(logf)}, cfg, d, train)
		check(fmt.Sprintf("float32, training %v", train), to64(got32), 1e-7)
	}

	rng := rand.New(rand.NewPCG(8, 1))
	h := gradcheck.New(t, []gradcheck.Input{
		gradcheck.Var("q", gradcheck.Rand(rng, 1, batch*n, d)), gradcheck.Var("k", gradcheck.Rand(rng, 1, batch*n, d)),
		gradcheck.Var("v", gradcheck.Rand(rng, 1, batch*n, d)), gradcheck.Var("logf", tensor.New(tensor.WithShape(batch*n, heads), tensor.WithBacking(logf))),
	}, func(g *G.ExprGraph, x []*G.Node) (*G.Node, error) {
		return nn.AttentionWith(x[0], x[1], x[2], nn.AttentionInputs{LogForget: x[3]}, cfg)
	})
	h.Run(t)
	dlogf := h.Analytic()[3]
	for b := range batch {
		for hh := range heads {
			if g := dlogf[b*n*heads+hh]; g != 0 {
				t.Errorf("sequence %d head %d: the gradient of f_0, in no sum, is %v", b, hh, g)
			}
			if g := dlogf[(b*n+1)*heads+hh]; g == 0 {
				t.Errorf("sequence %d head %d: the gradient of f_1 is 0", b, hh)
			}
		}
	}
}

// TestLogForget checks the gates against log σ written out, at logits where the naive
// log(1/(1+e^−z)) loses everything: σ(40) rounds to 1 in float64 and e^800 overflows. Only the
// layer's slice of the weights counts, and only it gets a gradient.
func TestLogForget(t *testing.T) {
	// x (3, 2), w (2 layers, 2, 2), b (2, 2): layer 1's logits are (0, 1), (40, −799), (−800, 41).
	x := []float64{0, 0, 1, 0, 0, 1}
	w := []float64{9, 9, 9, 9, 40, -800, -800, 40}
	b := []float64{9, 9, 0, 1}
	want := []float64{
		-math.Ln2, math.Log(1 / (1 + math.Exp(-1))),
		-math.Exp(-40), -799, // log σ(40) = −log(1 + e^−40) = −e^−40 to float64's precision
		-800, -math.Exp(-41),
	}
	in := []gradcheck.Input{
		gradcheck.Var("x", tensor.New(tensor.WithShape(3, 2), tensor.WithBacking(x))),
		gradcheck.Var("w", tensor.New(tensor.WithShape(2, 2, 2), tensor.WithBacking(w))),
		gradcheck.Var("b", tensor.New(tensor.WithShape(2, 2), tensor.WithBacking(b))),
	}
	h := gradcheck.New(t, in, func(g *G.ExprGraph, x []*G.Node) (*G.Node, error) { return nn.LogForget(x[0], x[1], x[2], 1) })
	h.Run(t)
	got := h.Output.Value().Data().([]float64)
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-15*math.Max(1, math.Abs(want[i])) || math.IsInf(got[i], 0) {
			t.Errorf("gate %d: %v, want %v", i, got[i], want[i])
		}
	}
	grads := h.Analytic()
	for i, g := range grads[1][:4] {
		if g != 0 {
			t.Errorf("w of layer 0 [%d]: gradient %v, want 0", i, g)
		}
	}
	if grads[2][0] != 0 || grads[2][1] != 0 {
		t.Errorf("b of layer 0: gradient %v, want 0", grads[2][:2])
	}
}

func TestLogForgetGradient(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 2))
	for _, layer := range []int{0, 2} {
		t.Run(fmt.Sprint("layer", layer), func(t *testing.T) {
			gradcheck.Check(t, []gradcheck.Input{
				gradcheck.Var("x", gradcheck.Rand(rng, 1, 7, 5)),
				gradcheck.Var("w", gradcheck.Rand(rng, 1, 3, 5, 2)),
				gradcheck.Var("b", gradcheck.Rand(rng, 1, 3, 2)),
			}, func(g *G.ExprGraph, x []*G.Node) (*G.Node, error) { return nn.LogForget(x[0], x[1], x[2], layer) })
		})
	}
}

func TestLogForgetMatchesStockOps(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 3))
	in := []gradcheck.Input{
		gradcheck.Var("x", gradcheck.Rand(rng, 1, 6, 4)), gradcheck.Var("w", gradcheck.Rand(rng, 1, 2, 4, 3)), gradcheck.Var("b", gradcheck.Rand(rng, 1, 2, 3)),
	}
	gradcheck.Same(t, in,
		func(g *G.ExprGraph, x []*G.Node) (*G.Node, error) { return nn.LogForget(x[0], x[1], x[2], 1) },
		func(g *G.ExprGraph, x []*G.Node) (*G.Node, error) { return stock.LogForget(x[0], x[1], x[2], 1) })
}

// forgetGates are log forget gates (batch·n, heads) as a model's: log σ of logits around 3 in
// head 0, which forgets a key in some tens of tokens, and around 8 in head 1, which keeps far
// keys in play across tiles of keys.
func forgetGates(rng *rand.Rand, batch, n, heads int) []float64 {
	logf := make([]float64, batch*n*heads)
	for i := range logf {
		z := 3 + 5*float64(i%heads%2) + rng.NormFloat64()
		logf[i] = -math.Log1p(math.Exp(-z))
	}
	return logf
}

// forgetBias is the reference's bias of sequence b: a bias by distance (an Alt pair's at the
// map's distance), plus the forget gates' D_ij = Σ_{l=j+1..i} log f_l, summed here term by term,
// which every pair takes at its true (i, j).
func forgetBias(m keyMap, dist []float64, logf []float64, b, n, heads int) func(h, i, j int, alt bool) float64 {
	byDistance := m.distanceBias(dist, n)
	return func(h, i, j int, alt bool) float64 {
		s := byDistance(h, i, j, alt)
		for l := j + 1; l <= i; l++ {
			s += logf[(b*n+l)*heads+h]
		}
		return s
	}
}

// TestForgetEvaluationIsTrainingsForward checks that evaluation with forget gates gives the
// training forward pass's output to the last bit while the keys fit in one tile, with a bias by
// distance and a query scale beside them, as TestTiledEvaluationIsTrainingsForward does.
func TestForgetEvaluationIsTrainingsForward(t *testing.T) {
	same := func(a, b float32) bool { return math.Float32bits(a) == math.Float32bits(b) }
	if nn.BLAS != "go-asm" {
		const eps = 0x1p-23
		same = func(a, b float32) bool { return math.Abs(float64(a-b)) <= 32*eps*(1+math.Abs(float64(b))) }
	}
	const batch, heads, d = 2, 2, 16
	for _, n := range []int{1, 7, 300} {
		rng := rand.New(rand.NewPCG(uint64(n), 12))
		in := attnInputs{q: randFloat32(rng, batch*n*d, 1), k: randFloat32(rng, batch*n*d, 1), v: randFloat32(rng, batch*n*d, 1),
			bias: randFloat32(rng, heads*n, 1), scale: randFloat32(rng, heads*n, 1), logf: to32(forgetGates(rng, batch, n, heads))}
		cfg := nn.AttentionConfig{Batch: batch, SeqLen: n, Heads: heads, Bias: nn.ByDistance, QueryScale: true, LogForget: true}
		want, _ := runAttention(t, in, cfg, d, true)
		got, _ := runAttention(t, in, cfg, d, false)
		for i := range want {
			if !same(got[i], want[i]) {
				t.Fatalf("n %d: output %d: evaluation %v, training %v", n, i, got[i], want[i])
			}
		}
	}
}

// TestForgetIsDefinition checks attention with forget gates against its definition, computed
// here in float64 with each D_ij summed term by term: training's forward pass, evaluation's in
// one tile and with the online softmax across tiles, and the masked path with a window and with
// remaps that mask keys and score some at alternate positions (sinks) or map their distance
// (ReRoPE), whose gates' bias stays that of the true positions. float32 evaluation must follow float64 to a few float32 units at
// every length: the running sums of log f are in float64.
func TestForgetIsDefinition(t *testing.T) {
	const heads, d, pairs = 2, 16, 2
	freq := inverseFrequencies(pairs, d/heads)
	for _, c := range []struct {
		n int
		m keyMap
	}{{300, windowed(0)}, {300, windowed(37)}, {300, sinks(4, 50)}, {300, rerope(40)}, {2600, windowed(0)}, {2600, windowed(700)}, {2600, sinks(4, 400)}} {
		if c.n > 2048 && testing.Short() {
			continue
		}
		t.Run(fmt.Sprintf("n%d/%s", c.n, c.m.name), func(t *testing.T) {
			batch := 1
			if c.n < 2048 {
				batch = 2
			}
			rng := rand.New(rand.NewPCG(uint64(c.n), uint64(len(c.m.name))))
			q, k, v := randNormal(rng, batch*c.n*d, 0, 0.7), randNormal(rng, batch*c.n*d, 0, 0.7), randNormal(rng, batch*c.n*d, 0, 1)
			dist, scale := randNormal(rng, heads*c.n, 0, 0.5), randNormal(rng, heads*c.n, 1, 0.3)
			logf := forgetGates(rng, batch, c.n, heads)
			cfg := c.m.config(batch, c.n, heads, freq)
			cfg.Bias, cfg.QueryScale, cfg.LogForget = nn.ByDistance, true, true
			far := c.n / 3
			ref := func(b int) reference {
				return reference{m: c.m, n: c.n, heads: heads, d: d, freq: freq, far: far, scale: scale, bias: forgetBias(c.m, dist, logf, b, c.n, heads),
					q: q[b*c.n*d : (b+1)*c.n*d], k: k[b*c.n*d : (b+1)*c.n*d], v: v[b*c.n*d : (b+1)*c.n*d]}
			}
			in := [5][]float64{q, k, v, dist, scale}
			rows := rowsToCheck(rng, c.n)
			if c.m.altQuery == nil && c.n < 2048 {
				train, st, err := runOpForget(in, logf, cfg, d, far, true)
				if err != nil {
					t.Fatal(err)
				}
				checkRows(t, train, st, ref, batch, rows, 1e-11)
			}
			got, st, err := runOpForget(in, logf, cfg, d, far, false)
			if err != nil {
				t.Fatal(err)
			}
			checkRows(t, got, st, ref, batch, rows, 1e-11)
			got32, _ := runAttention(t, attnInputs{q: to32(q), k: to32(k), v: to32(v), bias: to32(dist), scale: to32(scale), logf: to32(logf)}, cfg, d, false)
			sameWithin(t, "float32", to64(got32), got, nil, nil, 2e-5)
		})
	}
}
