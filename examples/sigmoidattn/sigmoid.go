// Package sigmoidattn is a normaliser of attention that lives outside the project's packages and
// has no fused kernel: sigmoid attention (Ramapuram et al. 2024, "Theory, Analysis, and Best
// Practices for Sigmoid Self-Attention", arXiv 2409.04431), which gives query i and key j the
// weight
//
//	w_ij = σ(s_ij + b)
//
// in place of the softmax over the row: each weight on its own, the row's weights summing to
// anything from 0 to the number of keys. The paper's recommended bias is b = −log n, n the
// training sequence length, so that a row of n keys at score 0 sums to about 1 at the start of
// training; its reference code (apple/ml-sigmoid-attention,
// attention_simulator/layers/attention.py) adds the bias to the masked scores and applies the
// sigmoid, a masked key at −∞ getting 0, and keeps b a constant buffer. So the bias is fixed at
// training and is the same at every evaluation length. With learn: true each head's bias is a
// weight of its own, started at b (an ablation of this package, not the paper's setting).
//
// It writes the normaliser's forward pass alone, in gorgonia's operations
// (position.GraphNormaliser): the model runs the attention of its layers on the stock ops, the
// decomposed attention, and gorgonia differentiates it. It adds no position information:
// position: {scheme: sigmoid} is NoPE with sigmoid attention. Importing the package registers
// it; a line in plugins/plugins.go's import block does so in every command:
//
//	_ "extrapolate/examples/sigmoidattn"
package sigmoidattn

import (
	"fmt"
	"math"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"extrapolate/position"
)

// Sigmoid is sigmoid attention with bias Bias, a bias per head when Learn.
type Sigmoid struct {
	Heads int
	Bias  float64
	Learn bool
}

func init() {
	position.Register("sigmoid", func(s position.Spec) (position.Scheme, error) {
		p := struct {
			Bias  *float64 `yaml:"bias"`
			Learn bool     `yaml:"learn"`
		}{}
		if err := s.Config.Decode(&p); err != nil {
			return nil, err
		}
		b := -math.Log(float64(max(s.TrainLen, 1))) // the paper's −log n
		if p.Bias != nil {
			b = *p.Bias
		}
		if math.IsNaN(b) || math.IsInf(b, 0) {
			return nil, fmt.Errorf("position.bias: %g, want a finite number", b)
		}
		return Sigmoid{Heads: s.Heads, Bias: b, Learn: p.Learn}, nil
	})
}

// Name is sigmoid.
func (Sigmoid) Name() string { return "sigmoid" }

// Weights is each head's bias when Learn, shared by the layers; none otherwise.
func (a Sigmoid) Weights() []position.Weight {
	if !a.Learn {
		return nil
	}
	init := make([]float64, a.Heads)
	for h := range init {
		init[h] = a.Bias
	}
	return []position.Weight{{Name: "sigmoid.bias", Dims: []int{a.Heads}, Init: init}}
}

// GraphWeights is σ(s + b_h) on the keys each query sees and 0 elsewhere, written as its
// forward pass alone; gorgonia differentiates it.
func (a Sigmoid) GraphWeights(g *G.ExprGraph, w []*G.Node, scores, seen *G.Node, _, heads, n int) (*G.Node, error) {
	var b *G.Node
	switch {
	case a.Learn:
		b = perHead(g, w[0], scores.Shape()[0], heads, n)
	case scores.Dtype() == tensor.Float32:
		b = G.NewConstant(float32(a.Bias))
	default:
		b = G.NewConstant(a.Bias)
	}
	biased, err := G.Add(scores, b)
	if err != nil {
		return nil, err
	}
	s, err := G.Sigmoid(biased)
	if err != nil {
		return nil, err
	}
	return G.HadamardProd(s, seen)
}

// perHead spreads the heads' biases, (heads), to the scores' shape, (rows, n, n), row r of the
// scores being head r mod heads's, by two products with constants.
func perHead(g *G.ExprGraph, bias *G.Node, rows, heads, n int) *G.Node {
	dt := bias.Dtype()
	spread := make([]float64, rows*heads)
	for r := range rows {
		spread[r*heads+r%heads] = 1
	}
	col := G.Must(G.Mul(position.GraphConstant(g, dt, fmt.Sprintf("sigmoid.spread%d", rows), spread, rows, heads),
		G.Must(G.Reshape(bias, tensor.Shape{heads, 1}))))
	full := G.Must(G.Mul(col, position.GraphConstant(g, dt, fmt.Sprintf("sigmoid.ones%d", n), fill(n*n, 1), 1, n*n)))
	return G.Must(G.Reshape(full, tensor.Shape{rows, n, n}))
}

// fill is n copies of v.
func fill(n int, v float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = v
	}
	return out
}
