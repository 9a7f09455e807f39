package logbias_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gorgonia.org/tensor"

	"extrapolate/examples/logbias"
	"extrapolate/internal/trainbench"
	"extrapolate/model"
	"extrapolate/position"
)

// fused is logbias with its gradient written by hand, as the package had it before its bias
// became a graph: the hand-fused twin that gorgonia's gradient of the graph is checked against.
type fused struct{ heads int }

func init() {
	position.Register("logbias_fused", func(s position.Spec) (position.Scheme, error) {
		p := struct {
			Slope float64 `yaml:"slope"`
		}{Slope: 1}
		return fused{s.Heads}, s.Config.Decode(&p)
	})
}

func (fused) Name() string { return "logbias_fused" }

// Weights are logbias's, by the same name, so that two models of one seed start alike.
func (f fused) Weights() []position.Weight {
	return logbias.LogBias{Heads: f.heads, Init: 1}.Weights()
}

// LearnedBias is −a_h·log(1+δ), in float64.
func (f fused) LearnedBias(w [][]float64, _, n int) (*position.Bias, error) {
	b := position.NewBias(f.heads, n, false)
	for h, a := range w[0] {
		for d := 0; d < n; d++ {
			b.Values[h*n+d] = -a * math.Log1p(float64(d))
		}
	}
	return b, nil
}

// LearnedBiasGrad: ∂bias/∂a_h = −log(1+δ).
func (f fused) LearnedBiasGrad(_ [][]float64, _, n int, dBias []float64, dw [][]float64) {
	for h := range dw[0] {
		for d := 0; d < n; d++ {
			dw[0][h] -= dBias[h*n+d] * math.Log1p(float64(d))
		}
	}
}

// schemes builds logbias and its twin for heads heads.
func schemes(t *testing.T, heads int) (graph, hand position.Scheme) {
	t.Helper()
	for _, name := range []string{"logbias", "logbias_fused"} {
		s, err := position.New(position.Spec{DModel: 4 * heads, Heads: heads, Layers: 2, TrainLen: 8, Config: position.Config{Scheme: name}})
		if err != nil {
			t.Fatal(err)
		}
		graph, hand = hand, s
	}
	return graph, hand
}

// TestGraphBiasMatchesHandWritten checks, in float64, that gorgonia's evaluation of the graph
// and its gradient are the hand-written bias and gradient, and the gradient finite differences
// of the graph's bias.
func TestGraphBiasMatchesHandWritten(t *testing.T) {
	const heads, n = 3, 11
	graph, hand := schemes(t, heads)
	if form, err := position.BiasForm(graph); form != position.FromWeights || err != nil {
		t.Fatalf("logbias's bias form %v, %v; want FromWeights", form, err)
	}
	rng := rand.New(rand.NewPCG(5, 1))
	w := [][]float64{{0.3, 1.7, -0.4}}
	dBias := make([]float64, heads*n)
	for i := range dBias {
		dBias[i] = rng.NormFloat64()
	}
	gb, err := position.BiasAt(graph, w, 0, n)
	if err != nil {
		t.Fatal(err)
	}
	hb, _ := position.BiasAt(hand, w, 0, n)
	if gb.PerQuery || gb.Heads != heads || gb.Len != n {
		t.Fatalf("graph bias %d heads × %d, per query %v", gb.Heads, gb.Len, gb.PerQuery)
	}
	for i, x := range hb.Values {
		if math.Abs(gb.Values[i]-x) > 1e-15*(1+math.Abs(x)) {
			t.Fatalf("bias value %d: graph %v, hand-written %v", i, gb.Values[i], x)
		}
	}
	gd, hd := [][]float64{make([]float64, heads)}, [][]float64{make([]float64, heads)}
	position.BiasGrad(graph, w, 0, n, dBias, gd)
	position.BiasGrad(hand, w, 0, n, dBias, hd)
	const eps = 1e-6
	for h := range w[0] {
		if math.Abs(gd[0][h]-hd[0][h]) > 1e-12*(1+math.Abs(hd[0][h])) {
			t.Errorf("slope %d: graph gradient %v, hand-written %v", h, gd[0][h], hd[0][h])
		}
		up, down := [][]float64{append([]float64(nil), w[0]...)}, [][]float64{append([]float64(nil), w[0]...)}
		up[0][h] += eps
		down[0][h] -= eps
		bu, _ := position.BiasAt(graph, up, 0, n)
		bd, _ := position.BiasAt(graph, down, 0, n)
		var fd float64
		for i := range dBias {
			fd += dBias[i] * (bu.Values[i] - bd.Values[i]) / (2 * eps)
		}
		if math.Abs(gd[0][h]-fd) > 1e-6*(1+math.Abs(fd)) {
			t.Errorf("slope %d: graph gradient %v, finite differences %v", h, gd[0][h], fd)
		}
	}
}

// TestGraphModelMatchesHandWritten trains the model from one seed, once with each twin, on the
// same batches with AdamW: in float32, as training runs, the first step's loss agrees to float32
// rounding and every weight's gradient within 10⁻⁶ of the hand-written one's, relative to its
// norm; in float64, where rounding cannot hide a difference in the computation, every one of 30
// steps' losses agrees within 10⁻¹⁰: the same trained numbers. (In float32 the two round
// differently, by an ulp of the bias, and training carries that along: run through
// training.Run for 30 steps, their evaluation losses differ by about 5·10⁻⁵ relative.)
func TestGraphModelMatchesHandWritten(t *testing.T) {
	graph, hand := schemes(t, 2)
	for _, c := range []struct {
		dt              tensor.Dtype
		steps           int
		loss, gradients float64
	}{{tensor.Float32, 1, 1e-6, 1e-6}, {tensor.Float64, 30, 1e-10, 1e-9}} {
		g := train(t, graph, c.dt, c.steps)
		h := train(t, hand, c.dt, c.steps)
		for i := range h.losses {
			if rel := math.Abs(g.losses[i]-h.losses[i]) / h.losses[i]; !(rel <= c.loss) {
				t.Errorf("%v, step %d: loss %v with the graph, %v hand-written (relative %.2g)", c.dt, i+1, g.losses[i], h.losses[i], rel)
			}
		}
		for i, name := range h.names {
			if rel := normDiff(g.grads[i], h.grads[i]); !(rel <= c.gradients) {
				t.Errorf("%v: %s's first gradient differs by %.2g of its norm", c.dt, name, rel)
			}
		}
	}
}

// trained is what train records: each step's loss, and the first step's gradients by weight.
type trained struct {
	losses []float64
	grads  [][]float64
	names  []string
}

// train trains a 2-layer model with s in dtype dt for steps steps of AdamW on random batches,
// the same for every scheme.
func train(t *testing.T, s position.Scheme, dt tensor.Dtype, steps int) trained {
	t.Helper()
	const heads, n, batch = 2, 12, 3
	m, err := model.New(model.Config{Vocab: 256, DModel: 4 * heads, Layers: 2, Heads: heads, TrainLen: n}, s, dt, 9)
	if err != nil {
		t.Fatal(err)
	}
	g, err := m.Graph(s, batch, n, model.Options{Train: true})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	opt := model.NewAdamW(m, model.Schedule{LR: 1e-2, MinLR: 1e-3, Warmup: 2, Steps: steps}, 0.1, 1)
	rng := rand.New(rand.NewPCG(6, 2))
	var out trained
	for step := 0; step < steps; step++ {
		for i := range g.IDs {
			g.IDs[i], g.Targets[i] = rng.IntN(256), rng.IntN(256)
		}
		loss, err := g.Run()
		if err != nil {
			t.Fatal(err)
		}
		out.losses = append(out.losses, loss)
		var grads []*tensor.Dense
		for i, p := range m.Params {
			grads = append(grads, g.Grad(i))
			if step == 0 {
				out.grads = append(out.grads, floats(g.Grad(i)))
				out.names = append(out.names, p.Name)
			}
		}
		if _, err := opt.Update(m.Params, grads); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func floats(d *tensor.Dense) []float64 {
	switch v := d.Data().(type) {
	case []float32:
		out := make([]float64, len(v))
		for i, x := range v {
			out[i] = float64(x)
		}
		return out
	case []float64:
		return append([]float64(nil), v...)
	}
	panic(fmt.Sprintf("gradient of %v", d.Dtype()))
}

// normDiff is |a − b| / |b|.
func normDiff(a, b []float64) float64 {
	var diff, norm float64
	for j := range a {
		diff += (a[j] - b[j]) * (a[j] - b[j])
		norm += b[j] * b[j]
	}
	return math.Sqrt(diff / norm)
}

// BenchmarkTrainStep times a training step (forward, backward and AdamW) of the comparison's
// model (width 64, 2 layers, 4 heads, 16 sequences of 64 tokens) with each twin: the cost of the
// graph bias, differentiated by gorgonia, against the hand-written one's nn.Compute.
func BenchmarkTrainStep(b *testing.B) {
	for _, name := range []string{"logbias", "logbias_fused"} {
		b.Run(name, func(b *testing.B) { trainbench.Step(b, position.Config{Scheme: name}) })
	}
}
