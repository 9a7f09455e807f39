package position

import (
	"fmt"
	"math"
)

// XPos is RoPE with a decay (Sun et al., 2022, "A Length-Extrapolatable Transformer"): pair i
// of the query at position t is scaled by ζ_i^(t/B) and of the key by ζ_i^(−t/B), with
// ζ_i = (2i/d + γ)/(1 + γ), so the score of a query and a key j positions apart carries
// ζ_i^(j/B) and fades with distance, fastest in the fastest-turning pairs. γ = 0.4 and
// B = 512 (scale_base) by default, as in torchscale. It takes RoPE's fields and scalings too.
type XPos struct {
	*RoPE
	Gamma, ScaleBase float64
}

func init() {
	Register("xpos", func(s Spec) (Scheme, error) {
		d := defaultRoPEParams()
		p := struct {
			Base           float64 `yaml:"base"`
			Pairing        string  `yaml:"pairing"`
			RotaryFraction float64 `yaml:"rotary_fraction"`
			Gamma          float64 `yaml:"gamma"`
			ScaleBase      float64 `yaml:"scale_base"`
		}{Base: d.Base, Pairing: d.Pairing, RotaryFraction: d.RotaryFraction, Gamma: 0.4, ScaleBase: 512}
		if err := s.Config.Decode(&p); err != nil {
			return nil, err
		}
		if !(p.Gamma > 0) || math.IsInf(p.Gamma, 0) {
			return nil, fmt.Errorf("position.gamma: %g, want a positive number", p.Gamma)
		}
		if !(p.ScaleBase > 0) || math.IsInf(p.ScaleBase, 0) {
			return nil, fmt.Errorf("position.scale_base: %g, want a positive number", p.ScaleBase)
		}
		r, err := buildRoPE(s, ropeParams{Base: p.Base, Pairing: p.Pairing, RotaryFraction: p.RotaryFraction})
		if err != nil {
			return nil, err
		}
		return &XPos{RoPE: r, Gamma: p.Gamma, ScaleBase: p.ScaleBase}, nil
	})
}

// Name is xpos.
func (*XPos) Name() string { return "xpos" }

// Zeta returns each pair's decay base ζ_i = (2i/d + γ)/(1 + γ).
func (x *XPos) Zeta() []float64 {
	z := make([]float64, x.Dim/2)
	for i := range z {
		z[i] = (float64(2*i)/float64(x.Dim) + x.Gamma) / (1 + x.Gamma)
	}
	return z
}

// Rotation is RoPE's, with the queries' tables scaled by ζ_i^(t/B) and the keys' by ζ_i^(−t/B).
func (x *XPos) Rotation(n int) (*Rotation, error) {
	r, err := x.RoPE.Rotation(n)
	if err != nil {
		return nil, err
	}
	z := x.Zeta()
	p := len(z)
	r.KeyCos, r.KeySin = make([]float64, len(r.Cos)), make([]float64, len(r.Sin))
	for t := 0; t < n; t++ {
		for i, zi := range z {
			up := math.Pow(zi, float64(t)/x.ScaleBase)
			k := t*p + i
			r.KeyCos[k], r.KeySin[k] = r.Cos[k]/up, r.Sin[k]/up
			r.Cos[k], r.Sin[k] = r.Cos[k]*up, r.Sin[k]*up
		}
	}
	return r, nil
}

// Describe adds γ, B and the decay bases to RoPE's numbers.
func (x *XPos) Describe(n int) map[string]any {
	d := x.RoPE.Describe(n)
	d["gamma"], d["scale_base"], d["zeta"] = x.Gamma, x.ScaleBase, x.Zeta()
	return d
}
