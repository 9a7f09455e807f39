package position

import (
	"fmt"
	"math"
	"sort"
)

// RoPE rotates each head's queries and keys by position (Su et al., 2021): pair i of a head of
// width d turns by t·base^(-2i/d) at position t, so q·k depends on the distance only. A Scaling
// changes the frequencies to reach past the training length.
type RoPE struct {
	Base        float64
	Dim         int // rotated width: the head dimension
	Interleaved bool
	TrainLen    int
	scaling     *Scaling
}

func init() { Register("rope", newRoPE) }

func newRoPE(s Spec) (Scheme, error) {
	var p struct {
		Base    float64 `yaml:"base"`
		Pairing string  `yaml:"pairing"`
	}
	p.Base, p.Pairing = 10000, "half"
	if err := s.Config.Decode(&p); err != nil {
		return nil, err
	}
	r := &RoPE{Base: p.Base, Dim: s.HeadDim(), TrainLen: s.TrainLen, scaling: s.Config.Scaling}
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
	if r.Dim%2 != 0 {
		return nil, fmt.Errorf("position.scheme: RoPE needs an even head dimension, d_model/heads = %d/%d = %d", s.DModel, s.Heads, r.Dim)
	}
	if err := r.scaling.check(r.Dim); err != nil {
		return nil, err
	}
	return r, nil
}

// scalings computes the frequencies and attention factor of each scaling type for d rotated
// dimensions, base b, training length l and factor s, at n positions: one function per type, as
// in Hugging Face transformers' rope utilities.
var scalings = map[string]func(c *Scaling, d int, b float64, l, n int, s float64) ([]float64, float64){
	"linear":      linearInvFreq,
	"ntk":         ntkInvFreq,
	"dynamic_ntk": dynamicNTKInvFreq,
	"yarn":        yarnInvFreq,
}

// ScalingTypes lists the scaling types, sorted.
func ScalingTypes() []string {
	var t []string
	for k := range scalings {
		t = append(t, k)
	}
	sort.Strings(t)
	return t
}

func (c *Scaling) check(dim int) error {
	if c == nil {
		return nil
	}
	if _, ok := scalings[c.Type]; !ok {
		return fmt.Errorf("position.scaling.type: unknown type %q (known: %v)", c.Type, ScalingTypes())
	}
	if !c.Factor.Auto && !(c.Factor.Value >= 1) {
		return fmt.Errorf("position.scaling.factor: %v, want a number of at least 1, or auto", c.Factor)
	}
	if c.Type != "yarn" && (c.BetaFast != 0 || c.BetaSlow != 0 || c.Truncate != nil) {
		return fmt.Errorf("position.scaling: beta_fast, beta_slow and truncate belong to yarn, not %s", c.Type)
	}
	if c.Type == "yarn" {
		fast, slow := c.betas()
		if !(fast > slow) || !(slow > 0) {
			return fmt.Errorf("position.scaling.beta_fast: %g must exceed beta_slow %g, and both be positive", fast, slow)
		}
	}
	if (c.Type == "ntk" || c.Type == "dynamic_ntk") && dim <= 2 {
		return fmt.Errorf("position.scaling.type: %s needs a head dimension above 2, not %d", c.Type, dim)
	}
	return nil
}

func (c *Scaling) betas() (fast, slow float64) {
	fast, slow = c.BetaFast, c.BetaSlow
	if fast == 0 {
		fast = 32
	}
	if slow == 0 {
		slow = 1
	}
	return fast, slow
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
	if r.scaling == nil {
		return invFreq0(r.Dim, r.Base), 1
	}
	s := r.scaling.Factor.At(n, r.TrainLen)
	return scalings[r.scaling.Type](r.scaling, r.Dim, r.Base, r.TrainLen, n, s)
}

// invFreq0 is RoPE's frequency ladder, base^(-2i/d) for i < d/2.
func invFreq0(d int, base float64) []float64 {
	f := make([]float64, d/2)
	for i := range f {
		f[i] = math.Pow(base, -float64(2*i)/float64(d))
	}
	return f
}

// linearInvFreq is position interpolation (Chen et al., 2023): every frequency divided by s.
func linearInvFreq(_ *Scaling, d int, b float64, _, _ int, s float64) ([]float64, float64) {
	f := invFreq0(d, b)
	for i := range f {
		f[i] /= s
	}
	return f, 1
}

// ntkInvFreq is NTK-aware scaling: the base raised to b·s^(d/(d-2)), which stretches the lowest
// frequency by s and leaves the highest nearly alone.
func ntkInvFreq(_ *Scaling, d int, b float64, _, _ int, s float64) ([]float64, float64) {
	return invFreq0(d, b*math.Pow(s, float64(d)/float64(d-2))), 1
}

// dynamicNTKInvFreq recomputes the NTK base for the length at hand: for n > l,
// b·(s·n/l - (s-1))^(d/(d-2)); at or below the training length the frequencies are unchanged.
func dynamicNTKInvFreq(_ *Scaling, d int, b float64, l, n int, s float64) ([]float64, float64) {
	if n <= l {
		return invFreq0(d, b), 1
	}
	r := s*float64(n)/float64(l) - (s - 1)
	return invFreq0(d, b*math.Pow(r, float64(d)/float64(d-2))), 1
}

// yarnInvFreq is YaRN (Peng et al., 2023): frequencies that turn fewer than beta_slow times over
// the training length are interpolated (divided by s), those that turn more than beta_fast times
// are kept, and a linear ramp blends the ones between. The attention factor 0.1·ln(s)+1 scales
// cos and sin alike.
func yarnInvFreq(c *Scaling, d int, b float64, l, _ int, s float64) ([]float64, float64) {
	fast, slow := c.betas()
	// The dimension at which a frequency turns r times over l positions.
	dimFor := func(r float64) float64 {
		return float64(d) * math.Log(float64(l)/(r*2*math.Pi)) / (2 * math.Log(b))
	}
	low, high := dimFor(fast), dimFor(slow)
	if c.Truncate == nil || *c.Truncate {
		low, high = math.Floor(low), math.Ceil(high)
	}
	low, high = math.Max(low, 0), math.Min(high, float64(d-1))
	if low == high {
		high += 0.001 // as the reference does, so that the ramp is defined
	}
	f := invFreq0(d, b)
	for i := range f {
		ramp := math.Min(1, math.Max(0, (float64(i)-low)/(high-low)))
		// ramp 0: keep (extrapolate); ramp 1: interpolate.
		f[i] = f[i]/s*ramp + f[i]*(1-ramp)
	}
	factor := 1.0
	if s > 1 {
		factor = 0.1*math.Log(s) + 1
	}
	return f, factor
}

// Describe gives the base and the rotated width.
func (r *RoPE) Describe(int) map[string]any {
	return map[string]any{"base": r.Base, "rotated_dim": r.Dim, "interleaved": r.Interleaved}
}
