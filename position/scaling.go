package position

import (
	"fmt"
	"math"
	"reflect"
	"strings"

	"extrapolate/internal/pluginhint"
)

// ScalingType is one way of stretching RoPE past its training length, registered by name, as
// Hugging Face transformers keeps its ROPE_INIT_FUNCTIONS: one function per type, with its
// fields, their defaults and their checks, in one place. cmd/eval's list of scalings,
// cmd/inspect's flags and the comparison's claims all come from the registry.
type ScalingType struct {
	// Doc says in one line what the type does, for help texts.
	Doc string
	// Params returns a pointer to a new struct holding the type's own fields at their defaults,
	// tagged with their yaml names; nil for a type without fields.
	Params func() any
	// Check, if set, checks the decoded fields for a head of d rotated dimensions.
	Check func(params any, d int) error
	// Frequencies returns the frequencies and the attention factor for d rotated dimensions,
	// base b, training length l, n positions and factor s.
	Frequencies func(params any, d int, b float64, l, n int, s float64) (invFreq []float64, attentionFactor float64)
	// NeedsFinetune marks a type that is meant to be fine-tuned with (position interpolation):
	// claims about scaling without fine-tuning leave it out.
	NeedsFinetune bool
}

var scalingTypes = registry[ScalingType]{kind: "scaling type"}

// RegisterScaling makes a scaling type available by name. It panics if the name is taken or the
// type has no Frequencies, since either is a programming error.
func RegisterScaling(name string, t ScalingType) {
	if t.Frequencies == nil {
		panic("position: scaling type " + name + " registered without Frequencies")
	}
	scalingTypes.add(name, t)
}

// ScalingTypes lists the registered scaling types, sorted.
func ScalingTypes() []string { return scalingTypes.names() }

// LookupScaling returns a registered scaling type.
func LookupScaling(name string) (ScalingType, bool) { return scalingTypes.lookup(name) }

// ScalingParam is one field of a scaling type, for command-line flags and help.
type ScalingParam struct {
	Type, Name string
	Default    any
}

// ScalingParams lists every registered type's fields with their defaults, by type then name.
func ScalingParams() []ScalingParam {
	var out []ScalingParam
	for _, name := range ScalingTypes() {
		t, _ := LookupScaling(name)
		if t.Params == nil {
			continue
		}
		v := reflect.ValueOf(t.Params()).Elem()
		for i := 0; i < v.NumField(); i++ {
			tag, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("yaml"), ",")
			if tag != "" && tag != "-" {
				out = append(out, ScalingParam{Type: name, Name: tag, Default: v.Field(i).Interface()})
			}
		}
	}
	return out
}

// scaler is a scaling resolved for a head of d rotated dimensions: its type, its fields decoded
// and checked, and its factor. Only resolve makes one, so a scaling that was not checked cannot
// compute frequencies; and nothing changes it after, so the layers of a mix share the config
// value it came from without one of them writing into it.
type scaler struct {
	t      ScalingType
	params any
	factor Factor
	d      int
}

// resolve decodes and checks the scaling's type and fields for a head of d rotated dimensions.
// It returns nil for no scaling.
func (c *Scaling) resolve(d int) (*scaler, error) {
	if c == nil {
		return nil, nil
	}
	t, ok := LookupScaling(c.Type)
	if !ok {
		return nil, fmt.Errorf("position.scaling.type: unknown type %q (known: %v); %s", c.Type, ScalingTypes(), pluginhint.For("scaling"))
	}
	if !c.Factor.Auto && !(c.Factor.Value >= 1) {
		return nil, fmt.Errorf("position.scaling.factor: %v, want a number of at least 1, or auto", c.Factor)
	}
	var params any = &struct{}{}
	if t.Params != nil {
		params = t.Params()
	}
	if err := decodeParams("position.scaling.", "the "+c.Type+" scaling", c.Params, c.nodes, params); err != nil {
		return nil, err
	}
	if t.Check != nil {
		if err := t.Check(params, d); err != nil {
			return nil, err
		}
	}
	return &scaler{t: t, params: params, factor: c.Factor, d: d}, nil
}

// frequencies computes the frequencies and attention factor at n positions, for base b and
// training length l.
func (s *scaler) frequencies(b float64, l, n int) ([]float64, float64) {
	return s.t.Frequencies(s.params, s.d, b, l, n, s.factor.At(n, l))
}

func init() {
	RegisterScaling("linear", ScalingType{
		Doc:           "position interpolation (Chen et al. 2023): inv_freq / s",
		Frequencies:   linearInvFreq,
		NeedsFinetune: true,
	})
	RegisterScaling("ntk", ScalingType{
		Doc:         "NTK-aware: base' = base · s^(d/(d−2))",
		Check:       needsDimAbove2("ntk"),
		Frequencies: ntkInvFreq,
	})
	RegisterScaling("dynamic_ntk", ScalingType{
		Doc:         "for n > L, base' = base · (s·n/L − (s−1))^(d/(d−2)); unchanged for n ≤ L",
		Check:       needsDimAbove2("dynamic_ntk"),
		Frequencies: dynamicNTKInvFreq,
	})
	RegisterScaling("yarn", ScalingType{
		Doc:         "YaRN (Peng et al. 2023): NTK-by-parts between the dimensions that turn beta_fast and beta_slow times over L, floor/ceil unless truncate is false, and the attention factor 0.1·ln(s)+1 on both cos and sin",
		Params:      func() any { return &yarnParams{BetaFast: 32, BetaSlow: 1, Truncate: true} },
		Check:       checkYaRN,
		Frequencies: yarnInvFreq,
	})
	RegisterScaling("llama3", ScalingType{
		Doc:         "Llama 3 (HF's _compute_llama3_parameters): wavelengths above L/low_freq_factor divided by s, below L/high_freq_factor kept, a smooth blend between; L is original_max_position_embeddings, the training length when 0",
		Params:      func() any { return &llama3Params{LowFreqFactor: 1, HighFreqFactor: 4} },
		Check:       checkLlama3,
		Frequencies: llama3InvFreq,
	})
}

func needsDimAbove2(name string) func(any, int) error {
	return func(_ any, d int) error {
		if d <= 2 {
			return fmt.Errorf("position.scaling.type: %s needs a rotated dimension above 2, not %d", name, d)
		}
		return nil
	}
}

// linearInvFreq is position interpolation (Chen et al., 2023): every frequency divided by s.
func linearInvFreq(_ any, d int, b float64, _, _ int, s float64) ([]float64, float64) {
	f := invFreq0(d, b)
	for i := range f {
		f[i] /= s
	}
	return f, 1
}

// ntkInvFreq is NTK-aware scaling: the base raised to b·s^(d/(d-2)), which stretches the lowest
// frequency by s and leaves the highest nearly alone.
func ntkInvFreq(_ any, d int, b float64, _, _ int, s float64) ([]float64, float64) {
	return invFreq0(d, b*math.Pow(s, float64(d)/float64(d-2))), 1
}

// dynamicNTKInvFreq recomputes the NTK base for the length at hand: for n > l,
// b·(s·n/l - (s-1))^(d/(d-2)); at or below the training length the frequencies are unchanged.
func dynamicNTKInvFreq(_ any, d int, b float64, l, n int, s float64) ([]float64, float64) {
	if n <= l {
		return invFreq0(d, b), 1
	}
	r := s*float64(n)/float64(l) - (s - 1)
	return invFreq0(d, b*math.Pow(r, float64(d)/float64(d-2))), 1
}

// yarnParams are YaRN's fields.
type yarnParams struct {
	BetaFast float64 `yaml:"beta_fast"`
	BetaSlow float64 `yaml:"beta_slow"`
	Truncate bool    `yaml:"truncate"`
}

func checkYaRN(p any, _ int) error {
	y := p.(*yarnParams)
	if !(y.BetaFast > y.BetaSlow) || !(y.BetaSlow > 0) || math.IsInf(y.BetaFast, 0) {
		return fmt.Errorf("position.scaling.beta_fast: %g must exceed beta_slow %g, and both be positive", y.BetaFast, y.BetaSlow)
	}
	return nil
}

// yarnInvFreq is YaRN (Peng et al., 2023): frequencies that turn fewer than beta_slow times over
// the training length are interpolated (divided by s), those that turn more than beta_fast times
// are kept, and a linear ramp blends the ones between. The attention factor 0.1·ln(s)+1 scales
// cos and sin alike.
func yarnInvFreq(p any, d int, b float64, l, _ int, s float64) ([]float64, float64) {
	y := p.(*yarnParams)
	// The dimension at which a frequency turns r times over l positions.
	dimFor := func(r float64) float64 {
		return float64(d) * math.Log(float64(l)/(r*2*math.Pi)) / (2 * math.Log(b))
	}
	low, high := dimFor(y.BetaFast), dimFor(y.BetaSlow)
	if y.Truncate {
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

// llama3Params are Llama 3's fields, named as in its rope_scaling.
type llama3Params struct {
	LowFreqFactor  float64 `yaml:"low_freq_factor"`
	HighFreqFactor float64 `yaml:"high_freq_factor"`
	// OriginalMaxPosition is the length the model was trained at; 0 means the training length.
	OriginalMaxPosition int `yaml:"original_max_position_embeddings"`
}

func checkLlama3(p any, _ int) error {
	q := p.(*llama3Params)
	if !(q.HighFreqFactor > q.LowFreqFactor) || !(q.LowFreqFactor > 0) || math.IsInf(q.HighFreqFactor, 0) {
		return fmt.Errorf("position.scaling.high_freq_factor: %g must exceed low_freq_factor %g, and both be positive", q.HighFreqFactor, q.LowFreqFactor)
	}
	if q.OriginalMaxPosition < 0 {
		return fmt.Errorf("position.scaling.original_max_position_embeddings: %d, want 0 (the training length) or a positive length", q.OriginalMaxPosition)
	}
	return nil
}

// llama3InvFreq is Llama 3's scaling, as in HF's _compute_llama3_parameters: a frequency whose
// wavelength exceeds L/low_freq_factor is divided by s, one whose wavelength is below
// L/high_freq_factor is kept, and those between blend the two with weight
// (L/wavelength − low_freq_factor)/(high_freq_factor − low_freq_factor) on the kept one.
func llama3InvFreq(p any, d int, b float64, l, _ int, s float64) ([]float64, float64) {
	q := p.(*llama3Params)
	old := float64(l)
	if q.OriginalMaxPosition > 0 {
		old = float64(q.OriginalMaxPosition)
	}
	lowWave, highWave := old/q.LowFreqFactor, old/q.HighFreqFactor
	f := invFreq0(d, b)
	for i, x := range f {
		wave := 2 * math.Pi / x
		switch {
		case wave < highWave:
		case wave > lowWave:
			f[i] = x / s
		default:
			smooth := (old/wave - q.LowFreqFactor) / (q.HighFreqFactor - q.LowFreqFactor)
			f[i] = (1-smooth)*x/s + smooth*x
		}
	}
	return f, 1
}
