package position

import (
	"fmt"
	"math"
)

// KERPLE is the logarithmic variant of KERPLE (Chi et al., 2022): head h of each layer adds
// −r1·log(1 + r2·δ) to the score of the key δ positions back, with r1, r2 > 0 learned per head
// and layer. As in the reference code, both are held at or above 0.01: the bias uses
// max(r, 0.01), and the gradient passes to r unchanged.
type KERPLE struct {
	Heads, Layers int
}

// kerpleMin is the floor of r1 and r2, the reference code's eps.
const kerpleMin = 0.01

func init() {
	Register("kerple", func(s Spec) (Scheme, error) {
		if err := s.Config.Decode(&struct{}{}); err != nil {
			return nil, err
		}
		return KERPLE{Heads: s.Heads, Layers: s.Layers}, nil
	})
}

// Name is kerple.
func (KERPLE) Name() string { return "kerple" }

// Weights are kerple.r1 and kerple.r2, (layers, heads). The reference draws r1 from U(0, 2) and
// r2 from U(0, 1); here they start spread evenly over those ranges, head by head.
func (k KERPLE) Weights() []Weight {
	r1, r2 := make([]float64, k.Layers*k.Heads), make([]float64, k.Layers*k.Heads)
	for i := range r1 {
		h := float64(i%k.Heads) + 0.5
		r1[i], r2[i] = 2*h/float64(k.Heads), h/float64(k.Heads)
	}
	return []Weight{
		{Name: "kerple.r1", Dims: []int{k.Layers, k.Heads}, Init: r1},
		{Name: "kerple.r2", Dims: []int{k.Layers, k.Heads}, Init: r2},
	}
}

func (k KERPLE) params(w [][]float64, layer, h int) (r1, r2 float64) {
	i := layer*k.Heads + h
	return math.Max(w[0][i], kerpleMin), math.Max(w[1][i], kerpleMin)
}

// LearnedBias is −r1·log(1 + r2·δ) for each head of the layer.
func (k KERPLE) LearnedBias(w [][]float64, layer, n int) (*Bias, error) {
	if layer < 0 || layer >= k.Layers {
		return nil, fmt.Errorf("kerple: layer %d of %d", layer, k.Layers)
	}
	b := NewBias(k.Heads, n, false)
	for h := 0; h < k.Heads; h++ {
		r1, r2 := k.params(w, layer, h)
		for d := 0; d < n; d++ {
			b.Values[h*n+d] = -r1 * math.Log1p(r2*float64(d))
		}
	}
	return b, nil
}

// LearnedBiasGrad: ∂/∂r1 = −log(1 + r2·δ), ∂/∂r2 = −r1·δ/(1 + r2·δ).
func (k KERPLE) LearnedBiasGrad(w [][]float64, layer, n int, dBias []float64, dw [][]float64) {
	for h := 0; h < k.Heads; h++ {
		r1, r2 := k.params(w, layer, h)
		var g1, g2 float64
		for d := 0; d < n; d++ {
			g, x := dBias[h*n+d], float64(d)
			g1 -= g * math.Log1p(r2*x)
			g2 -= g * r1 * x / (1 + r2*x)
		}
		dw[0][layer*k.Heads+h] += g1
		dw[1][layer*k.Heads+h] += g2
	}
}
