package model

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gorgonia.org/tensor"

	"extrapolate/model/nn"
	"extrapolate/position"
)

// TestLayerInputs checks what Graph.LayerInputs gives against the layer written out by hand in
// float64: layer 0's LayerNorm of the token embeddings, q and k from it, FoX's gates
// log σ(x·w[l] + b[l]) of each layer's own input and weights, and Scalable-Softmax's factors
// s_h·log(i+1), with every weight drawn away from its initial value so that a wrong row, layer
// or weight shows.
func TestLayerInputs(t *testing.T) {
	c := tiny
	c.Attention, c.TrainLen = Attention{Scale: "ssmax"}, tinyLen
	s, err := position.New(position.Spec{DModel: c.DModel, Heads: c.Heads, Layers: c.Layers, TrainLen: tinyLen, Config: position.Config{Scheme: "fox"}})
	if err != nil {
		t.Fatal(err)
	}
	m, err := New(c, s, tensor.Float64, 3)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, p := range m.Params {
		for i, v := range nn.Values[float64](p.Value) {
			nn.Values[float64](p.Value)[i] = v + 0.3*rng.NormFloat64()
		}
	}
	const n = 6
	g, err := m.Graph(s, 1, n, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if _, err := g.LayerInputs(0); err == nil || !strings.Contains(err.Error(), "run the graph first") {
		t.Fatalf("before a run: %v, want an error", err)
	}
	ids := []int{3, 1, 4, 1, 5, 9}
	copy(g.IDs, ids)
	if _, err := g.Run(); err != nil {
		t.Fatal(err)
	}
	d, heads := c.DModel, c.Heads
	val := func(p *Param) []float64 { return nn.Values[float64](p.Value) }
	in0, err := g.LayerInputs(0)
	if err != nil {
		t.Fatal(err)
	}
	h0 := m.h[0]
	for r, id := range ids {
		x := layerNorm(val(m.wte)[id*d:(id+1)*d], val(h0.ln1G), val(h0.ln1B))
		near(t, "layer 0 x", in0.X[r*d:(r+1)*d], x)
		near(t, "layer 0 q", in0.Q[r*d:(r+1)*d], affine(x, val(h0.wq), val(h0.bq)))
		near(t, "layer 0 k", in0.K[r*d:(r+1)*d], affine(x, val(h0.wk), val(h0.bk)))
	}
	wf, bf := m.SchemeWeights(0)[0], m.SchemeWeights(0)[1] // (layers, d, heads), (layers, heads)
	for l := range c.Layers {
		in, err := g.LayerInputs(l)
		if err != nil {
			t.Fatal(err)
		}
		for r := range n {
			z := affine(in.X[r*d:(r+1)*d], wf[l*d*heads:(l+1)*d*heads], bf[l*heads:(l+1)*heads])
			for h := range heads {
				z[h] = -math.Log1p(math.Exp(-z[h]))
			}
			near(t, "log forget gates", in.LogForget[r*heads:(r+1)*heads], z)
		}
		sh := val(m.h[l].temperature[0])
		want := make([]float64, heads*n)
		for h := range heads {
			for i := range n {
				want[h*n+i] = sh[h] * math.Log(float64(i+1))
			}
		}
		near(t, "query scale", in.Scale, want)
	}
	if _, err := g.LayerInputs(c.Layers); err == nil {
		t.Error("a layer past the last: no error")
	}
}

// layerNorm is (x − mean)/√(var + ε)·g + b, the biased variance, as PyTorch's.
func layerNorm(x, g, b []float64) []float64 {
	var mean, v float64
	for _, a := range x {
		mean += a / float64(len(x))
	}
	for _, a := range x {
		v += (a - mean) * (a - mean) / float64(len(x))
	}
	out := make([]float64, len(x))
	for i, a := range x {
		out[i] = (a-mean)/math.Sqrt(v+LayerNormEps)*g[i] + b[i]
	}
	return out
}

// affine is x·w + b for w of (len(x), len(b)), row-major.
func affine(x, w, b []float64) []float64 {
	out := append([]float64(nil), b...)
	for i, a := range x {
		for j := range out {
			out[j] += a * w[i*len(b)+j]
		}
	}
	return out
}

func near(t *testing.T, what string, got, want []float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-12*(1+math.Abs(want[i])) {
			t.Fatalf("%s[%d] = %.17g, want %.17g", what, i, got[i], want[i])
		}
	}
}
