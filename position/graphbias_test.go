package position

import (
	"math"
	"strings"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// quadratic is a GraphBiaser per query: head h adds −a_h·(i−j)²/(i+1) to query i's score of key
// j ≤ i, built from a constant (1, n, n) of (i−j)²/(i+1) times the slopes (heads, 1, 1).
type quadratic struct {
	heads int
	shape []int // the node's shape, when a test asks for a wrong one
}

func (quadratic) Name() string { return "quadratic" }
func (q quadratic) Weights() []Weight {
	return []Weight{{Name: "quadratic.a", Dims: []int{q.heads}}}
}

func (q quadratic) GraphBias(g *G.ExprGraph, w []*G.Node, _, n int) (*G.Node, error) {
	v := make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := 0; j <= i; j++ {
			v[i*n+j] = float64((i-j)*(i-j)) / float64(i+1)
		}
	}
	c := GraphConstant(g, w[0].Dtype(), "quadratic.d2", v, 1, n, n)
	a, err := G.Reshape(w[0], tensor.Shape{q.heads, 1, 1})
	if err != nil {
		return nil, err
	}
	ab, cb, err := G.Broadcast(a, c, G.NewBroadcastPattern([]byte{1, 2}, []byte{0}))
	if err != nil {
		return nil, err
	}
	out := G.Must(G.Neg(G.Must(G.HadamardProd(ab, cb))))
	if q.shape != nil {
		return G.Reshape(out, q.shape)
	}
	return out, nil
}

// both gives its bias as a graph and with a hand-written gradient.
type both struct{ quadratic }

func (both) LearnedBias([][]float64, int, int) (*Bias, error)              { return nil, nil }
func (both) LearnedBiasGrad([][]float64, int, int, []float64, [][]float64) {}

// TestGraphBias checks the adapter's evaluation of a per-query graph bias against its formula,
// its gradient against finite differences, and what it refuses: a node of the wrong shape, and a
// scheme that gives its learned bias both ways.
func TestGraphBias(t *testing.T) {
	const heads, n = 2, 5
	s := quadratic{heads: heads}
	w := [][]float64{{0.7, -1.3}}
	b, err := BiasAt(s, w, 0, n)
	if err != nil {
		t.Fatal(err)
	}
	if !b.PerQuery || b.Heads != heads || b.Len != n {
		t.Fatalf("bias %d heads × %d, per query %v", b.Heads, b.Len, b.PerQuery)
	}
	for h := 0; h < heads; h++ {
		for i := 0; i < n; i++ {
			for j := 0; j <= i; j++ {
				want := -w[0][h] * float64((i-j)*(i-j)) / float64(i+1)
				if got := b.At(h, i, j); math.Abs(got-want) > 1e-15 {
					t.Errorf("head %d, query %d, key %d: %v, want %v", h, i, j, got, want)
				}
			}
		}
	}
	dBias := make([]float64, heads*n*n)
	for i := range dBias {
		dBias[i] = math.Sin(float64(i))
	}
	dw := [][]float64{make([]float64, heads)}
	BiasGrad(s, w, 0, n, dBias, dw)
	const eps = 1e-6
	for h := range w[0] {
		up, down := [][]float64{append([]float64(nil), w[0]...)}, [][]float64{append([]float64(nil), w[0]...)}
		up[0][h] += eps
		down[0][h] -= eps
		bu, _ := BiasAt(s, up, 0, n)
		bd, _ := BiasAt(s, down, 0, n)
		var fd float64
		for i := range dBias {
			fd += dBias[i] * (bu.Values[i] - bd.Values[i]) / (2 * eps)
		}
		if math.Abs(dw[0][h]-fd) > 1e-7*(1+math.Abs(fd)) {
			t.Errorf("slope %d: gradient %v, finite differences %v", h, dw[0][h], fd)
		}
	}
	if _, err := BiasAt(quadratic{heads: heads, shape: []int{heads, n * n}}, w, 0, n); err == nil || !strings.Contains(err.Error(), "shape") {
		t.Errorf("a graph bias of shape (heads, n²): %v, want an error naming its shape", err)
	}
	if _, err := BiasForm(both{s}); err == nil || !strings.Contains(err.Error(), "both") {
		t.Errorf("a scheme with a graph bias and a hand-written one: %v, want an error", err)
	}
}
