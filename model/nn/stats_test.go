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
	// Head 0 leans to far keys and head 1 to near ones, so that head 0 is a sink (its mean
	// weight on key 0 above 0.3) and head 1 is not.
	for x, b := range bias.Data().([]float64) {
		bias.Data().([]float64)[x] = b + float64(x%n)*float64(1-2*(x/n))
	}
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
	firstBySeq := make([]float64, heads*batch) // Σ over queries of the weight on key 0
	for h := 0; h < heads; h++ {
		for i := 0; i < n; i++ {
			var ent, farMass, first float64
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
				first += p[0]
				firstBySeq[h*batch+b] += p[0]
			}
			// Two runs of the same batch: twice each sum.
			if got := st.Entropy[h*n+i]; math.Abs(got-2*ent) > 1e-9 {
				t.Errorf("head %d query %d: entropy sum %v, want %v", h, i, got, 2*ent)
			}
			if got := st.FarMass[h*n+i]; math.Abs(got-2*farMass) > 1e-9 || (i < far && got != 0) {
				t.Errorf("head %d query %d: far mass sum %v, want %v", h, i, got, 2*farMass)
			}
			if got := st.First[h*n+i]; math.Abs(got-2*first) > 1e-9 || (i == 0 && got != 2*batch) {
				t.Errorf("head %d query %d: first-key weight sum %v, want %v", h, i, got, 2*first)
			}
		}
	}
	// A head is a sink in a sequence where its mean weight on key 0 over the queries is above
	// 0.3 (Gu et al. 2025); these inputs make some heads sinks and others not.
	var sinks, total int
	for h := 0; h < heads; h++ {
		want := 0
		for b := 0; b < batch; b++ {
			if firstBySeq[h*batch+b]/n > 0.3 {
				want += 2
			}
		}
		if st.Sinks[h] != want {
			t.Errorf("head %d: a sink in %d sequences, want %d", h, st.Sinks[h], want)
		}
		sinks, total = sinks+want, total+2*batch
	}
	if sinks == 0 || sinks == total {
		t.Errorf("%d of %d (head, sequence) pairs are sinks: the check cannot tell a wrong count", sinks, total)
	}
}
