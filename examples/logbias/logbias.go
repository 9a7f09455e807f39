// Package logbias is a position scheme that lives outside package position, as a user's own
// scheme would: each head adds −a·log(1+δ) to the score of the key δ positions back, with the
// slope a learned per head. Importing the package registers it, as importing image/png registers
// PNG with package image:
//
//	import _ "extrapolate/examples/logbias"
//
// after which position: {scheme: logbias, slope: 0.5} works in any config.
package logbias

import (
	"fmt"
	"math"

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

// LearnedBias is −a_h·log(1+δ), the same in every layer.
func (l LogBias) LearnedBias(w [][]float64, _, n int) (*position.Bias, error) {
	b := position.NewBias(l.Heads, n, false)
	for h, a := range w[0] {
		for d := 0; d < n; d++ {
			b.Values[h*n+d] = -a * math.Log1p(float64(d))
		}
	}
	return b, nil
}

// LearnedBiasGrad: ∂bias/∂a_h = −log(1+δ).
func (l LogBias) LearnedBiasGrad(_ [][]float64, _, n int, dBias []float64, dw [][]float64) {
	for h := range dw[0] {
		for d := 0; d < n; d++ {
			dw[0][h] -= dBias[h*n+d] * math.Log1p(float64(d))
		}
	}
}
