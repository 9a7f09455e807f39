package nn_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"extrapolate/model/nn"
)

// copeCase is one attention with contextual positions: its shape, window, embeddings of npos
// positions in layers layers with layer acting, and its inputs in float64, with a query scale
// and a bias by distance when scale and bias are set.
type copeCase struct {
	batch, n, heads, d, npos, layers, layer, window int
	q, k, v, e, scale, bias                         []float64
}

func (c copeCase) config() nn.AttentionConfig {
	return nn.AttentionConfig{Batch: c.batch, SeqLen: c.n, Heads: c.heads, Window: c.window, CoPE: true, CoPELayer: c.layer,
		QueryScale: c.scale != nil, Bias: map[bool]nn.BiasForm{false: nn.NoBias, true: nn.ByDistance}[c.bias != nil]}
}

// run runs the op in dtype dt and returns its output. With weights it is differentiated, as
// training runs it, and also returns the gradients of Σ out⊙weights for q, k and e.
func (c copeCase) run(t *testing.T, dt tensor.Dtype, weights []float64) (out []float64, dq, dk, de []float64) {
	t.Helper()
	g := G.NewGraph()
	node := func(name string, x []float64, shape ...int) *G.Node {
		if x == nil {
			return nil
		}
		var v *tensor.Dense
		if dt == tensor.Float32 {
			v = tensor.New(tensor.WithShape(shape...), tensor.WithBacking(to32(x)))
		} else {
			v = tensor.New(tensor.WithShape(shape...), tensor.WithBacking(append([]float64(nil), x...)))
		}
		return G.NewTensor(g, dt, len(shape), G.WithShape(shape...), G.WithName(name), G.WithValue(v))
	}
	rows, hd := c.batch*c.n, c.d/c.heads
	q, k, e := node("q", c.q, rows, c.d), node("k", c.k, rows, c.d), node("e", c.e, c.layers, hd, c.npos)
	o, err := nn.AttentionWith(q, k, node("v", c.v, rows, c.d), nn.AttentionInputs{CoPE: e,
		Scale: node("scale", c.scale, c.heads, c.n), Bias: node("bias", c.bias, c.heads, c.n)}, c.config())
	if err != nil {
		t.Fatal(err)
	}
	if weights != nil {
		loss := G.Must(G.Sum(G.Must(G.HadamardProd(o, node("w", weights, rows, c.d)))))
		if _, err := G.Grad(loss, q, k, e); err != nil {
			t.Fatal(err)
		}
	}
	vm := G.NewTapeMachine(g)
	defer vm.Close()
	if err := vm.RunAll(); err != nil {
		t.Fatal(err)
	}
	values := func(n *G.Node) []float64 {
		if f, ok := n.Value().Data().([]float32); ok {
			return to64(f)
		}
		return append([]float64(nil), n.Value().Data().([]float64)...)
	}
	if weights == nil {
		return values(o), nil, nil, nil
	}
	grad := func(n *G.Node) []float64 {
		gv, err := n.Grad()
		if err != nil {
			t.Fatal(err)
		}
		if f, ok := gv.Data().([]float32); ok {
			return to64(f)
		}
		return append([]float64(nil), gv.Data().([]float64)...)
	}
	return values(o), grad(q), grad(k), grad(e)
}

// definition is query i's output in head h of sequence b, computed here from CoPE's definition
// term by term: each key's position the sum of the gates σ(q·k/√d) from it to the query, taken
// as it comes (no floor or ceiling) through the hat functions max(0, 1 − |p − m|) that weigh
// position m's logit q·e_m/√d.
func (c copeCase) definition(b, h, i int) []float64 {
	hd := c.d / c.heads
	vec := func(x []float64, t int) []float64 { return x[(b*c.n+t)*c.d+h*hd : (b*c.n+t)*c.d+(h+1)*hd] }
	dot := func(x, y []float64) (s float64) {
		for a := range x {
			s += x[a] * y[a]
		}
		return s
	}
	lo := 0
	if c.window > 0 {
		lo = max(0, i-c.window+1)
	}
	e := c.e[c.layer*hd*c.npos : (c.layer+1)*hd*c.npos]
	z := make([]float64, c.npos)
	for m := range z {
		for a := 0; a < hd; a++ {
			z[m] += vec(c.q, i)[a] * e[a*c.npos+m] / math.Sqrt(float64(hd))
		}
	}
	logits := make([]float64, i+1)
	p := 0.0
	for j := i; j >= lo; j-- {
		s := dot(vec(c.q, i), vec(c.k, j)) / math.Sqrt(float64(hd))
		p += 1 / (1 + math.Exp(-s))
		pc := math.Min(p, float64(c.npos-1))
		if c.scale != nil {
			s *= c.scale[h*c.n+i]
		}
		if c.bias != nil {
			s += c.bias[h*c.n+i-j]
		}
		for m, zm := range z {
			s += zm * math.Max(0, 1-math.Abs(pc-float64(m)))
		}
		logits[j] = s
	}
	mx := math.Inf(-1)
	for _, s := range logits[lo:] {
		mx = math.Max(mx, s)
	}
	var sum float64
	out := make([]float64, hd)
	for j := lo; j <= i; j++ {
		w := math.Exp(logits[j] - mx)
		sum += w
		for a, x := range vec(c.v, j) {
			out[a] += w * x
		}
	}
	for a := range out {
		out[a] /= sum
	}
	return out
}

// TestCoPEGolden checks a 4-token sequence, one head of 4 dimensions and embeddings of 3
// positions, against numbers from the reference itself: ContextPosSelfAttn.forward of
// facebookresearch/RAM's projects/cope/src/cope/context_position.py, its CoPE lines run in
// PyTorch (float64) on these inputs with v the unit vectors, so that the output's row i is the
// attention of query i, and its autograd for the gradients of Σ out⊙c. Rows 2 and 3 count past
// position 2 from key 0 and are clamped there. Training's and evaluation's forward passes must
// give the reference's output, and training's backward pass its gradients.
func TestCoPEGolden(t *testing.T) {
	c := copeCase{batch: 1, n: 4, heads: 1, d: 4, npos: 3, layers: 1,
		q: []float64{1, 0.5, -0.5, 2, 0.5, 1.5, 1, -1, 2, 1, 0.5, 1.5, -1, 2, 1.5, 1},
		k: []float64{0.5, 1, 0, 1.5, 1.5, -0.5, 1, 0.5, 1, 2, -1, 0.5, 2, 0.5, 1.5, 1},
		v: []float64{1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1},
		e: []float64{0.5, -1, 2, 1, 0.5, -0.5, -1.5, 1, 0.5, 0.5, 2, -1}}
	weights := []float64{1, 2, 3, 4, -1, 0.5, 2, -2, 0.5, -1.5, 1, 3, 2, 1, -1, 0.5}
	want := map[string][]float64{
		"output": {1, 0, 0, 0, 0.4706030597718358, 0.5293969402281642, 0, 0,
			0.3790300483237041, 0.28647710804413745, 0.3344928436321584, 0,
			0.02943055158849172, 0.007137918068460723, 0.1691691252104615, 0.7942624051325861},
		"dq": {0, 0, 0, 0, 0.12465536385336326, -0.24559515449259212, -0.07792973456048975, -0.3789546206172189,
			-0.4262846334340349, 0.5950551469530554, -0.3724396049470162, 0.3398838032633816,
			0.3714090669132008, 0.1319952469951633, 0.29787637636487574, 0.2879179447459491},
		"dk": {0.006162824549643536, -0.24042597377283145, -0.16891446409594638, 0.3854519913387262,
			-0.4041833574618752, -0.0552432826173538, 0.0017480379140398716, -0.465542020117411,
			0.3149825389875395, 0.11381382313584892, 0.0481714222963403, 0.20566269179011004,
			-0.21190368101307672, 0.42380736202615343, 0.31785552151961505, 0.21190368101307672},
		"de": {0.05317232728286837, 0.1232912379912271, -0.1764635652740955,
			0.1789812176494413, -0.004545912090288123, -0.1744353055591532,
			0.11996961962632209, -0.015511262262324396, -0.1044583573639977,
			-0.037512525700426555, 0.19094168498378822, -0.15342915928336165},
	}
	out, dq, dk, de := c.run(t, tensor.Float64, weights)
	eval, _, _, _ := c.run(t, tensor.Float64, nil)
	got := map[string][]float64{"output": out, "dq": dq, "dk": dk, "de": de, "evaluation": eval}
	want["evaluation"] = want["output"]
	for name, w := range want {
		for x := range w {
			if d := math.Abs(got[name][x] - w[x]); !(d <= 1e-14) {
				t.Errorf("%s[%d]: %v, reference %v", name, x, got[name][x], w[x])
			}
		}
	}
}

// randomCoPE is a case of random inputs: q and k spread so that the gates take every value
// between 0 and 1, embeddings as a trained model's.
func randomCoPE(rng *rand.Rand, batch, n, npos, window int) copeCase {
	const heads, d, layers = 2, 16, 2
	rows := batch * n * d
	return copeCase{batch: batch, n: n, heads: heads, d: d, npos: npos, layers: layers, layer: 1, window: window,
		q: randNormal(rng, rows, 0, 0.8), k: randNormal(rng, rows, 0, 0.8), v: randNormal(rng, rows, 0, 1),
		e: randNormal(rng, layers*(d/heads)*npos, 0, 1), scale: randNormal(rng, heads*n, 1, 0.3), bias: randNormal(rng, heads*n, 0, 0.5)}
}

// TestCoPEIsDefinition checks CoPE against its definition, computed here in float64, for
// embeddings of 65 positions (a model trained at 64 tokens): training's forward pass, and
// evaluation's in one tile of keys, across tiles with the online softmax (4100 keys, 64x the
// training length, whose tiles it visits from the last) and on the masked path with a window,
// each with a query scale and a bias beside it. The positions run to hundreds and are clamped
// at 64. float32 evaluation must follow float64 to a few float32 units: the gates are summed in
// float64.
func TestCoPEIsDefinition(t *testing.T) {
	for _, tc := range []struct{ n, window int }{{300, 0}, {300, 37}, {4100, 0}, {4100, 700}} {
		if tc.n > 2048 && testing.Short() {
			continue
		}
		t.Run(fmt.Sprintf("n%d/window%d", tc.n, tc.window), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(tc.n), uint64(tc.window)))
			batch := 1
			if tc.n < 2048 {
				batch = 2
			}
			c := randomCoPE(rng, batch, tc.n, 65, tc.window)
			rows := rowsToCheck(rng, tc.n)
			check := func(what string, got []float64, tol float64) {
				t.Helper()
				hd := c.d / c.heads
				for b := 0; b < batch; b++ {
					for h := 0; h < c.heads; h++ {
						for _, i := range rows {
							for a, w := range c.definition(b, h, i) {
								if g := got[(b*c.n+i)*c.d+h*hd+a]; !(math.Abs(g-w) <= tol) {
									t.Fatalf("%s: sequence %d head %d query %d [%d]: %v, definition %v", what, b, h, i, a, g, w)
								}
							}
						}
					}
				}
			}
			if tc.n < 2048 {
				train, _, _, _ := c.run(t, tensor.Float64, make([]float64, batch*tc.n*c.d))
				check("training", train, 1e-11)
			}
			eval, _, _, _ := c.run(t, tensor.Float64, nil)
			check("evaluation", eval, 1e-11)
			eval32, _, _, _ := c.run(t, tensor.Float32, nil)
			sameWithin(t, "float32", eval32, eval, nil, nil, 2e-5)
		})
	}
}

// TestCoPEEvaluationIsTrainingsForward checks that evaluation with CoPE gives the training
// forward pass's output to the last bit while the keys fit in one tile, as
// TestTiledEvaluationIsTrainingsForward does without it.
func TestCoPEEvaluationIsTrainingsForward(t *testing.T) {
	same := func(a, b float64) bool { return a == b }
	if nn.BLAS != "go-asm" {
		same = func(a, b float64) bool { return math.Abs(a-b) <= 32*0x1p-23*(1+math.Abs(b)) }
	}
	for _, n := range []int{1, 7, 300} {
		c := randomCoPE(rand.New(rand.NewPCG(uint64(n), 13)), 2, n, 65, 0)
		want, _, _, _ := c.run(t, tensor.Float32, make([]float64, 2*n*c.d))
		got, _, _, _ := c.run(t, tensor.Float32, nil)
		for i := range want {
			if !same(got[i], want[i]) {
				t.Fatalf("n %d: output %d: evaluation %v, training %v", n, i, got[i], want[i])
			}
		}
	}
}

// TestCoPECounts checks the paper's claim, that CoPE lets a head attend to the i-th unit of some
// kind back (the i-th sentence, word, ...) whatever the number of tokens between: here the
// second marker back from the last query. The keys of markers give that query's gate σ(20) ≈ 1
// and those of fillers σ(−20) ≈ 0, so a key's position is the number of markers from it to the
// query; the embeddings give position 2 a logit of 20 and the others 0. The last query must
// then read the value of the second-to-last marker, v_j = (j, 0), however many fillers lie
// between and after the markers, in training's forward pass and in evaluation's.
func TestCoPECounts(t *testing.T) {
	const npos = 8
	rng := rand.New(rand.NewPCG(9, 9))
	a, m := 4.0, 20*math.Sqrt2/4 // q·k/√2 = ±20
	for trial := range 20 {
		n := 20 + rng.IntN(180)
		c := copeCase{batch: 1, n: n, heads: 1, d: 2, npos: npos, layers: 1,
			q: make([]float64, 2*n), k: make([]float64, 2*n), v: make([]float64, 2*n), e: make([]float64, 2*npos)}
		var markers []int
		for j := 0; j < n-1; j++ {
			c.k[2*j] = -m
			if rng.IntN(n/5) == 0 || j == 0 || j == n/2 {
				c.k[2*j], markers = m, append(markers, j)
			}
			c.v[2*j] = float64(j)
		}
		c.k[2*(n-1)] = -m // the query itself is a filler
		for i := 0; i < n; i++ {
			c.q[2*i] = a
		}
		c.e[2] = 20 * math.Sqrt2 / a // z(2) = q·e_2/√2 = 20
		want := float64(markers[len(markers)-2])
		for _, train := range []bool{true, false} {
			var w []float64
			if train {
				w = make([]float64, 2*n)
			}
			out, _, _, _ := c.run(t, tensor.Float64, w)
			if got := out[2*(n-1)]; math.Abs(got-want) > 1e-4 {
				t.Fatalf("trial %d (%d tokens, markers %v), training %v: the last query reads %v, want the second marker back, %v", trial, n, markers, train, got, want)
			}
		}
	}
}

// TestCoPEFloat32Gradients checks training in float32, whose products of the position logits
// compute only the triangle the counts reach (the float64 ones, which the gradient checks use,
// are whole), against float64: embeddings of as many positions as the counts reach, of fewer
// (clamped) and of more. Each gradient must agree to float32 precision, relative to its largest
// value.
func TestCoPEFloat32Gradients(t *testing.T) {
	const n = 37
	for _, npos := range []int{n + 1, 9, n + 20} {
		c := randomCoPE(rand.New(rand.NewPCG(uint64(npos), 14)), 2, n, npos, 0)
		weights := randNormal(rand.New(rand.NewPCG(1, 1)), 2*n*c.d, 0, 1)
		o64, dq64, dk64, de64 := c.run(t, tensor.Float64, weights)
		o32, dq32, dk32, de32 := c.run(t, tensor.Float32, weights)
		for _, x := range []struct {
			name      string
			got, want []float64
		}{{"output", o32, o64}, {"dq", dq32, dq64}, {"dk", dk32, dk64}, {"de", de32, de64}} {
			var scale float64
			for _, w := range x.want {
				scale = math.Max(scale, math.Abs(w))
			}
			for i, w := range x.want {
				if d := math.Abs(x.got[i] - w); !(d <= 1e-5*scale) {
					t.Fatalf("npos %d: %s[%d]: float32 %v, float64 %v (largest %v)", npos, x.name, i, x.got[i], w, scale)
				}
			}
		}
	}
}

// TestCoPERefusesRemap checks that the op refuses a remap, naming CoPE: a key's position is a
// count over the keys the query sees, which no remap's alternate positions could give.
func TestCoPERefusesRemap(t *testing.T) {
	c := randomCoPE(rand.New(rand.NewPCG(2, 2)), 1, 8, 9, 0)
	g := G.NewGraph()
	node := func(name string, x []float64, shape ...int) *G.Node {
		v := tensor.New(tensor.WithShape(shape...), tensor.WithBacking(x))
		return G.NewTensor(g, tensor.Float64, len(shape), G.WithShape(shape...), G.WithName(name), G.WithValue(v))
	}
	cfg := c.config()
	cfg.QueryScale, cfg.Bias = false, nn.NoBias
	cfg.Remap = &nn.Remap{Spans: func(i int, dst []nn.Span) []nn.Span { return append(dst, nn.Span{From: 0, To: i + 1}) }}
	_, err := nn.AttentionWith(node("q", c.q, 8, c.d), node("k", c.k, 8, c.d), node("v", c.v, 8, c.d),
		nn.AttentionInputs{CoPE: node("e", c.e, c.layers, c.d/c.heads, c.npos)}, cfg)
	if err == nil || !strings.Contains(err.Error(), "CoPE") {
		t.Fatalf("CoPE with a remap: error %v", err)
	}
}
