// Package logbias is a position scheme that lives outside package position, as a user's own
// scheme would: each head adds −a·log(1+δ) to the score of the key δ positions back, with the
// slope a learned per head. It gives its bias as a gorgonia expression of the slopes
// (position.GraphBiaser), and gorgonia's autodiff trains them: no gradient is written by hand. Importing the package registers it, as importing image/png registers
// PNG with package image; a line in plugins/plugins.go's import block does so in every command:
//
//	_ "extrapolate/examples/logbias"
//
// after which position: {scheme: logbias, slope: 0.5} works in any config.
package logbias

import (
	"fmt"
	"math"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"extrapolate/position"
)

// LogBias adds −Slope[h]·log(1+δ) in head h.
type LogBias struct {
	Heads int
	// Init is every head's initial slope.
	Init float64
}

func init() {
	position.Register("logbias", func(s position.Spec) (position.Scheme, error) {
		// The scheme's own fields, with their defaults: Decode rejects any other.
		p := struct {
			Slope float64 `yaml:"slope"`
		}{Slope: 1}
		if err := s.Config.Decode(&p); err != nil {
			return nil, err
		}
		if !(p.Slope >= 0) || math.IsInf(p.Slope, 0) {
			return nil, fmt.Errorf("position.slope: %g, want a number of at least 0", p.Slope)
		}
		return LogBias{Heads: s.Heads, Init: p.Slope}, nil
	})
}

// Name is logbias.
func (LogBias) Name() string { return "logbias" }

// Weights is one slope per head, shared by the layers.
func (l LogBias) Weights() []position.Weight {
	init := make([]float64, l.Heads)
	for i := range init {
		init[i] = l.Init
	}
	return []position.Weight{{Name: "logbias.slope", Dims: []int{l.Heads}, Init: init}}
}

// GraphBias is −a_h·log(1+δ), the same in every layer, written as its forward pass alone: the
// slopes (heads, 1) times the row log(1+δ) (1, n), negated. Gorgonia differentiates it, so
// there is no gradient to write; logbias_test.go keeps the same bias with a hand-written
// gradient and checks that the two agree.
func (l LogBias) GraphBias(g *G.ExprGraph, w []*G.Node, _, n int) (*G.Node, error) {
	logd := make([]float64, n)
	for d := range logd {
		logd[d] = math.Log1p(float64(d))
	}
	row := position.GraphConstant(g, w[0].Dtype(), fmt.Sprintf("logbias.log1p%d", n), logd, 1, n)
	slopes, err := G.Reshape(w[0], tensor.Shape{l.Heads, 1})
	if err != nil {
		return nil, err
	}
	outer, err := G.Mul(slopes, row)
	if err != nil {
		return nil, err
	}
	return G.Neg(outer)
}
