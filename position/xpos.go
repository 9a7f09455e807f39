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
	register("xpos", func(s Spec) (Scheme, error) {
		d := defaultRoPEParams()
		p := struct {
			Base           float64 `yaml:"base"`
			Pairing        string  `yaml:"pairing"`
			RotaryFraction float64 `yaml:"rotary_fraction"`
			Gamma          float64 `yaml:"gamma"`
			ScaleBase      float64 `yaml:"scale_base"`
		}{Base: d.Base, Pairing: d.Pairing, RotaryFraction: d.RotaryFraction, Gamma: defaultGamma, ScaleBase: defaultScaleBase}
		if err := s.Config.Decode(&p); err != nil {
			return nil, err
		}
		if !(p.Gamma > 0) || math.IsInf(p.Gamma, 0) {
			return nil, fmt.Errorf("position.gamma: %g, want a positive number", p.Gamma)
		}
		if !(p.ScaleBase > 0) || math.IsInf(p.ScaleBase, 0) {
			return nil, fmt.Errorf("position.scale_base: %g, want a positive number", p.ScaleBase)
		}
		r, err := buildRoPE(s, ropeParams{Base: p.Base, Pairing: p.Pairing, RotaryFraction: p.RotaryFraction, FrequencyFraction: 1})
		if err != nil {
			return nil, err
		}
		return &XPos{RoPE: r, Gamma: p.Gamma, ScaleBase: p.ScaleBase}, nil
	})
}

// xPos's defaults, torchscale's.
const (
	defaultGamma     = 0.4
	defaultScaleBase = 512
)

// maxLog2Scale bounds xPos's largest scale, log2 of ζ_0^(−(n−1)/B): the key's at the last of n
// positions, whose inverse scales the query there. Both go to the attention op in float32, whose
// normal numbers span 2^±126: at 2^128 the key's table is infinite and the loss NaN, and well
// before, a query scaled towards 2^−126 loses its digits. 2^64 leaves 2^62 either way for the
// queries' and keys' own values and their sums. With the defaults (γ 0.4, B 512) it allows 18,131
// positions; with B = 8, 284.
const maxLog2Scale = 64

// log2Scale is log2 of the largest scale at n positions: ζ_0 = γ/(1+γ) is the smallest base.
func (x *XPos) log2Scale(n int) float64 {
	return float64(n-1) / x.ScaleBase * -math.Log2(x.Gamma/(1+x.Gamma))
}

// CheckLength refuses n positions at which a scale would leave float32's safe range, naming
// scale_base (or gamma, when only it was lowered from its default) and what would do.
func (x *XPos) CheckLength(n int) error {
	e := x.log2Scale(n)
	if e <= maxLog2Scale {
		return nil
	}
	// The inverse of log2Scale, for the longest length and the smallest B or γ that would do.
	perPos := -math.Log2(x.Gamma/(1+x.Gamma)) / x.ScaleBase
	longest := int(math.Floor(maxLog2Scale/perPos)) + 1
	if x.Gamma < defaultGamma && x.ScaleBase >= defaultScaleBase {
		z := math.Exp2(-maxLog2Scale * x.ScaleBase / float64(n-1))
		return fmt.Errorf("position.gamma: %g is too small for %d positions: xPos's scales ζ^(±(n−1)/B) would reach 2^%.0f (scale_base %g), beyond the 2^%d float32 holds safely; want gamma at least %.3g, or lengths up to %d",
			x.Gamma, n, e, x.ScaleBase, maxLog2Scale, z/(1-z), longest)
	}
	return fmt.Errorf("position.scale_base: %g is too small for %d positions: xPos's scales ζ^(±(n−1)/B) would reach 2^%.0f (gamma %g), beyond the 2^%d float32 holds safely; want scale_base at least %.4g, or lengths up to %d",
		x.ScaleBase, n, e, x.Gamma, maxLog2Scale, float64(n-1)*x.ScaleBase*perPos/maxLog2Scale, longest)
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
	if err := x.CheckLength(n); err != nil {
		return nil, err
	}
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
