package position

import (
	"fmt"
	"math"
)

// RoPE rotates each head's queries and keys by position (Su et al., 2021): pair i of the Dim
// rotated dimensions turns by t·base^(-2i/Dim) at position t, so q·k depends on the distance
// only. Dim is the head dimension, or with rotary_fraction f < 1 its first 2·⌊f·d/2⌋ dimensions,
// the rest passing unrotated (GPT-NeoX's rotary_pct). A Scaling changes the frequencies to reach
// past the training length.
type RoPE struct {
	Base        float64
	Dim         int // rotated width
	Interleaved bool
	TrainLen    int
	scaling     *Scaling // as configured, for Scaling
	scaler      *scaler  // the scaling resolved for Dim, nil for none
}

func init() { Register("rope", newRoPE) }

// ropeParams are RoPE's own fields with their defaults.
type ropeParams struct {
	Base           float64 `yaml:"base"`
	Pairing        string  `yaml:"pairing"`
	RotaryFraction float64 `yaml:"rotary_fraction"`
}

func defaultRoPEParams() ropeParams {
	return ropeParams{Base: 10000, Pairing: "half", RotaryFraction: 1}
}

func newRoPE(s Spec) (Scheme, error) {
	p := defaultRoPEParams()
	if err := s.Config.Decode(&p); err != nil {
		return nil, err
	}
	return buildRoPE(s, p)
}

func buildRoPE(s Spec, p ropeParams) (*RoPE, error) {
	r := &RoPE{Base: p.Base, TrainLen: s.TrainLen, scaling: s.Config.Scaling}
	if !(r.Base > 1) || math.IsInf(r.Base, 0) {
		return nil, fmt.Errorf("position.base: %g, want a number above 1", p.Base)
	}
	switch p.Pairing {
	case "half":
	case "interleaved":
		r.Interleaved = true
	default:
		return nil, fmt.Errorf("position.pairing: %q, want half or interleaved", p.Pairing)
	}
	hd := s.HeadDim()
	switch {
	case !(p.RotaryFraction > 0 && p.RotaryFraction <= 1):
		return nil, fmt.Errorf("position.rotary_fraction: %g, want a fraction in (0, 1]", p.RotaryFraction)
	case p.RotaryFraction == 1 && hd%2 != 0:
		return nil, fmt.Errorf("position.scheme: RoPE needs an even head dimension, d_model/heads = %d/%d = %d", s.DModel, s.Heads, hd)
	}
	r.Dim = 2 * int(math.Floor(p.RotaryFraction*float64(hd)/2))
	if r.Dim == 0 {
		return nil, fmt.Errorf("position.rotary_fraction: %g of a head of %d dimensions rotates no pair", p.RotaryFraction, hd)
	}
	var err error
	if r.scaler, err = r.scaling.resolve(r.Dim); err != nil {
		return nil, err
	}
	return r, nil
}

// Name is rope.
func (*RoPE) Name() string { return "rope" }

// Scaling returns the scaling in force, nil for none.
func (r *RoPE) Scaling() *Scaling { return r.scaling }

func (r *RoPE) Rotation(n int) (*Rotation, error) {
	f, factor := r.Frequencies(n)
	return NewRotation(f, r.Interleaved, factor, n), nil
}

// Frequencies returns the frequencies and the attention factor in force for n positions.
func (r *RoPE) Frequencies(n int) (invFreq []float64, attentionFactor float64) {
	if r.scaler == nil {
		return invFreq0(r.Dim, r.Base), 1
	}
	return r.scaler.frequencies(r.Base, r.TrainLen, n)
}

// invFreq0 is RoPE's frequency ladder, base^(-2i/d) for i < d/2.
func invFreq0(d int, base float64) []float64 {
	f := make([]float64, d/2)
	for i := range f {
		f[i] = math.Pow(base, -float64(2*i)/float64(d))
	}
	return f
}

// Describe gives the base and the rotated width.
func (r *RoPE) Describe(int) map[string]any {
	return map[string]any{"base": r.Base, "rotated_dim": r.Dim, "interleaved": r.Interleaved}
}
