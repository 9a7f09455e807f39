package position

import (
	"fmt"
	"math"
)

// RoPE rotates each head's queries and keys by position (Su et al., 2021): pair i of the Dim
// rotated dimensions turns by t·base^(-2i/Dim) at position t, so q·k depends on the distance
// only. Dim is the head dimension, or with rotary_fraction f < 1 its first 2·⌊f·d/2⌋ dimensions,
// the rest passing unrotated (GPT-NeoX's rotary_pct: the ladder is recomputed over the rotated
// width). With frequency_fraction p < 1 (p-RoPE, Barbero et al. 2025, "Round and Round We Go!
// What makes Rotary Positional Encodings useful?"), the whole head keeps the full ladder but
// only its ⌊p·d/2⌋ fastest pairs turn; the slowest pairs get frequency 0 and carry no position,
// as the paper's apply_p_rope listing and HF transformers' "proportional" RoPE compute them. A Scaling
// changes the frequencies to reach past the training length.
type RoPE struct {
	Base        float64
	Dim         int // rotated width
	Interleaved bool
	TrainLen    int
	// Stopped is the number of pairs that do not turn, the slowest: p-RoPE's; 0 for RoPE.
	Stopped int
	scaling *Scaling // as configured, for Scaling
	scaler  *scaler  // the scaling resolved for Dim, nil for none
}

func init() { register("rope", newRoPE) }

// ropeParams are RoPE's own fields with their defaults.
type ropeParams struct {
	Base           float64 `yaml:"base"`
	Pairing        string  `yaml:"pairing"`
	RotaryFraction float64 `yaml:"rotary_fraction"`
	// FrequencyFraction is p-RoPE's p: the share of the frequencies that turn.
	FrequencyFraction float64 `yaml:"frequency_fraction"`
}

func defaultRoPEParams() ropeParams {
	return ropeParams{Base: 10000, Pairing: "half", RotaryFraction: 1, FrequencyFraction: 1}
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
	if r.Stopped, err = stoppedPairs(p, hd, r.Dim); err != nil {
		return nil, err
	}
	if r.scaler, err = r.scaling.resolve(r.Dim); err != nil {
		return nil, err
	}
	return r, nil
}

// stoppedPairs is the number of the dim/2 rotated pairs that do not turn: none, or all but
// p-RoPE's ⌊p·d/2⌋ of the whole head's, as HF's int(p·d // 2).
func stoppedPairs(p ropeParams, hd, dim int) (int, error) {
	f := p.FrequencyFraction
	switch {
	case f == 1:
		return 0, nil
	case !(f > 0 && f < 1):
		return 0, fmt.Errorf("position.frequency_fraction: %g, want a fraction in (0, 1]", f)
	case p.RotaryFraction != 1:
		return 0, fmt.Errorf("position.frequency_fraction: p-RoPE stops the slowest pairs of the whole head, GPT-NeoX's rotary_fraction rotates part of it: give one of them")
	}
	n := int(math.Floor(f * float64(hd) / 2))
	if n == 0 {
		return 0, fmt.Errorf("position.frequency_fraction: %g of a head of %d dimensions turns no pair", f, hd)
	}
	return dim/2 - n, nil
}

// Name is rope.
func (*RoPE) Name() string { return "rope" }

// Scaling returns the scaling in force, nil for none.
func (r *RoPE) Scaling() *Scaling { return r.scaling }

func (r *RoPE) Rotation(n int) (*Rotation, error) {
	f, factor := r.Frequencies(n)
	return NewRotation(f, r.Interleaved, factor, n), nil
}

// Frequencies returns the frequencies and the attention factor in force for n positions. For
// p-RoPE, the Stopped slowest pairs have frequency 0 after any scaling, as HF's proportional
// RoPE sets them before its linear scaling, which leaves 0 at 0.
func (r *RoPE) Frequencies(n int) (invFreq []float64, attentionFactor float64) {
	invFreq, attentionFactor = invFreq0(r.Dim, r.Base), 1
	if r.scaler != nil {
		invFreq, attentionFactor = r.scaler.frequencies(r.Base, r.TrainLen, n)
	}
	clear(invFreq[len(invFreq)-r.Stopped:])
	return invFreq, attentionFactor
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
	d := map[string]any{"base": r.Base, "rotated_dim": r.Dim, "interleaved": r.Interleaved}
	if r.Stopped > 0 {
		d["stopped_pairs"] = r.Stopped
	}
	return d
}
