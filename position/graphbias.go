package position

import (
	"fmt"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// A GraphBiaser's bias is a gorgonia expression of its weights. The model builds it in its own
// graph; everything else that asks a scheme for its bias as numbers (Check, cmd/inspect, the
// memory estimate, a test of the gradient) goes through BiasAt and BiasGrad, which evaluate the
// expression here, in float64, in a graph of its own: the forward pass run once, or the
// gradient of Σ bias·dBias taken by gorgonia's autodiff.

// GraphConstant is a node of g holding a copy of values in the shape dims, in the float type dt
// (a weight node's Dtype()): a leaf that nothing differentiates with respect to, what a
// GraphBiaser multiplies its weights by. The model makes its own constants with it too.
func GraphConstant(g *G.ExprGraph, dt tensor.Dtype, name string, values []float64, dims ...int) *G.Node {
	var backing any = append([]float64(nil), values...)
	if dt == tensor.Float32 {
		v := make([]float32, len(values))
		for i, x := range values {
			v[i] = float32(x)
		}
		backing = v
	}
	t := tensor.New(tensor.WithShape(dims...), tensor.WithBacking(backing))
	return G.NewTensor(g, dt, len(dims), G.WithShape(dims...), G.WithName(name), G.WithValue(t))
}

// graphBias evaluates b's bias for layer at n positions from the weights w, in float64, and
// with dBias given, adds its gradient through Σ bias·dBias to dw.
func graphBias(b GraphBiaser, w [][]float64, layer, n int, dBias []float64, dw [][]float64) (*Bias, error) {
	g := G.NewGraph()
	decl := b.Weights()
	if len(w) != len(decl) {
		return nil, fmt.Errorf("position: the %s scheme declares %d weights, given %d", b.Name(), len(decl), len(w))
	}
	nodes := make([]*G.Node, len(decl))
	for i, d := range decl {
		if len(w[i]) != d.Size() {
			return nil, fmt.Errorf("position: the %s scheme's weight %s has %d values, want %d", b.Name(), d.Name, len(w[i]), d.Size())
		}
		v := tensor.New(tensor.WithShape(d.Dims...), tensor.WithBacking(append([]float64(nil), w[i]...)))
		nodes[i] = G.NewTensor(g, tensor.Float64, len(d.Dims), G.WithShape(d.Dims...), G.WithName(d.Name), G.WithValue(v))
	}
	out, err := b.GraphBias(g, nodes, layer, n)
	if err != nil {
		return nil, err
	}
	heads := out.Shape()[0]
	bias := &Bias{Heads: heads, Len: n, PerQuery: out.Dims() == 3}
	if want := NewBias(heads, n, bias.PerQuery); !out.Shape().Eq(biasShape(want)) {
		return nil, fmt.Errorf("position: the %s scheme's graph bias has shape %v, want (heads, %d) or (heads, %d, %d)", b.Name(), out.Shape(), n, n, n)
	}
	var grads G.Nodes
	if dBias != nil {
		d := GraphConstant(g, tensor.Float64, "dbias", dBias, out.Shape()...)
		cost := G.Must(G.Sum(G.Must(G.HadamardProd(out, d))))
		if grads, err = G.Grad(cost, nodes...); err != nil {
			return nil, fmt.Errorf("position: the %s scheme's graph bias: %w", b.Name(), err)
		}
	}
	vm := G.NewTapeMachine(g)
	defer vm.Close()
	if err := vm.RunAll(); err != nil {
		return nil, fmt.Errorf("position: the %s scheme's graph bias: %w", b.Name(), err)
	}
	bias.Values = append([]float64(nil), out.Value().Data().([]float64)...)
	for i, gn := range grads {
		for j, x := range gn.Value().Data().([]float64) {
			dw[i][j] += x
		}
	}
	return bias, nil
}

// biasShape is the shape of a bias's values as a graph holds them.
func biasShape(b *Bias) tensor.Shape {
	if b.PerQuery {
		return tensor.Shape{b.Heads, b.Len, b.Len}
	}
	return tensor.Shape{b.Heads, b.Len}
}
