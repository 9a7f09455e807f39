package nn_test

import (
	"math"
	"math/rand/v2"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"extrapolate/internal/gradcheck"
	"extrapolate/model/nn"
)

// TestAttentionStats checks the entropy and far mass the op accumulates against the attention
// probabilities computed here from their definition, softmax(scale·q·kᵀ/√d_head + bias) over
// the keys up to the query, over two forward passes.
func TestAttentionStats(t *testing.T) {
	const batch, n, heads, d, far = 3, 7, 2, 8, 3
	hd := d / heads
	rng := rand.New(rand.NewPCG(4, 2))
	q, k, v := gradcheck.Rand(rng, 1, batch*n, d), gradcheck.Rand(rng, 1, batch*n, d), gradcheck.Rand(rng, 1, batch*n, d)
	bias, scale := gradcheck.Rand(rng, 1, heads, n), gradcheck.Rand(rng, 1, heads, n)
	st := &nn.AttentionStats{Far: far}
	g := G.NewGraph()
	node := func(name string, x *tensor.Dense) *G.Node {
		return G.NewTensor(g, tensor.Float64, x.Dims(), G.WithShape(x.Shape()...), G.WithName(name), G.WithValue(x))
	}
	if _, err := nn.Attention(node("q", q), node("k", k), node("v", v), node("bias", bias), node("scale", scale),
		nn.AttentionConfig{Batch: batch, SeqLen: n, Heads: heads, Bias: nn.ByDistance, QueryScale: true, Stats: st}); err != nil {
		t.Fatal(err)
	}
	vm := G.NewTapeMachine(g)
	defer vm.Close()
	for run := 0; run < 2; run++ {
		vm.Reset()
		if err := vm.RunAll(); err != nil {
			t.Fatal(err)
		}
	}
	if st.Sequences != 2*batch {
		t.Fatalf("%d sequences counted, want %d", st.Sequences, 2*batch)
	}
	Q, K := q.Data().([]float64), k.Data().([]float64)
	B, S := bias.Data().([]float64), scale.Data().([]float64)
	for h := 0; h < heads; h++ {
		for i := 0; i < n; i++ {
			var ent, farMass float64
			for b := 0; b < batch; b++ {
				p := make([]float64, i+1)
				mx, sum := math.Inf(-1), 0.0
				for j := range p {
					var dot float64
					for x := 0; x < hd; x++ {
						dot += Q[(b*n+i)*d+h*hd+x] * K[(b*n+j)*d+h*hd+x]
					}
					p[j] = S[h*n+i]*dot/math.Sqrt(float64(hd)) + B[h*n+i-j]
					mx = math.Max(mx, p[j])
				}
				for j := range p {
					p[j] = math.Exp(p[j] - mx)
					sum += p[j]
				}
				for j := range p {
					p[j] /= sum
					ent -= p[j] * math.Log(p[j])
					if i-j >= far {
						farMass += p[j]
					}
				}
			}
			// Two runs of the same batch: twice each sum.
			if got := st.Entropy[h*n+i]; math.Abs(got-2*ent) > 1e-9 {
				t.Errorf("head %d query %d: entropy sum %v, want %v", h, i, got, 2*ent)
			}
			if got := st.FarMass[h*n+i]; math.Abs(got-2*farMass) > 1e-9 || (i < far && got != 0) {
				t.Errorf("head %d query %d: far mass sum %v, want %v", h, i, got, 2*farMass)
			}
		}
	}
}
