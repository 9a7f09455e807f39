package position

import (
	"fmt"
	"math"
)

// KERPLE is the logarithmic variant of KERPLE (Chi et al., 2022): head h of each layer adds
// −r1·log(1 + r2·δ) to the score of the key δ positions back, with r1, r2 > 0 learned per head
// and layer.
//
// The settings follow the reference code (ParallelKerpleLog in the paper's GPT-NeoX fork): r1 is
// drawn U(0, 2) and r2 U(0, 1) (torch.rand·2, torch.rand·1), and both are clamped in place to at
// least 0.01 before every use (bias_p.data.clamp(min=eps)), which here is after every update;
// GPT-NeoX decays every weight not named "bias" outside the norms, so r1 and r2 are decayed.
// `lr_scale` changes their learning rate.
type KERPLE struct {
	Heads, Layers int
	LRScale       float64
}

// kerpleMin is the floor of r1 and r2, the reference code's eps.
const kerpleMin = 0.01

func init() {
	register("kerple", func(s Spec) (Scheme, error) {
		p := struct {
			LRScale float64 `yaml:"lr_scale"`
		}{LRScale: 1}
		if err := s.Config.Decode(&p); err != nil {
			return nil, err
		}
		if err := checkPositive("position.lr_scale", p.LRScale); err != nil {
			return nil, err
		}
		return KERPLE{Heads: s.Heads, Layers: s.Layers, LRScale: p.LRScale}, nil
	})
}

// Name is kerple.
func (KERPLE) Name() string { return "kerple" }

// Sources states KERPLE's settings and where they come from.
func (k KERPLE) Sources() string {
	return fmt.Sprintf("KERPLE: r1 drawn U(0, 2) and r2 U(0, 1), clamped in place at %g after every update, decayed "+
		"(the reference ParallelKerpleLog and GPT-NeoX's decay of every weight not named bias); learning rate × %g. References: docs/references.md#kerple.", kerpleMin, k.LRScale)
}

// Weights are kerple.r1 and kerple.r2, (layers, heads), drawn and kept at or above the floor
// as the reference does.
func (k KERPLE) Weights() []Weight {
	floor := kerpleMin
	return []Weight{
		{Name: "kerple.r1", Dims: []int{k.Layers, k.Heads}, Uniform: 2, Floor: &floor, Decay: true, LRScale: k.LRScale},
		{Name: "kerple.r2", Dims: []int{k.Layers, k.Heads}, Uniform: 1, Floor: &floor, Decay: true, LRScale: k.LRScale},
	}
}

// params are a head's r1 and r2. The model keeps them at or above the floor; the max guards
// weights set by hand (cmd/inspect -param).
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
