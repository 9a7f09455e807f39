package position

import (
	"fmt"
	"math"
	"strconv"

	"go.yaml.in/yaml/v3"
)

// Config is the position section of a run's config. Each scheme reads the fields it needs and
// rejects the ones it does not, so a misplaced field is an error rather than silently ignored.
type Config struct {
	// Scheme names a registered scheme: nope, learned, sinusoidal, rope, alibi, ...
	Scheme string `yaml:"scheme"`
	// Base is RoPE's frequency base, 10000 when unset.
	Base float64 `yaml:"base,omitempty"`
	// Pairing is RoPE's choice of rotated pairs: "half" (i, i+d/2), the default, or
	// "interleaved" (2i, 2i+1).
	Pairing string `yaml:"pairing,omitempty"`
	// MaxLen is the number of rows of a learned table, the training length when unset.
	MaxLen int `yaml:"max_len,omitempty"`
	// Scaling stretches RoPE to lengths beyond the training length.
	Scaling *Scaling `yaml:"scaling,omitempty"`
}

// Scaling is a RoPE context-extension method, named as in Hugging Face transformers.
type Scaling struct {
	// Type is linear (position interpolation), ntk (NTK-aware), dynamic_ntk or yarn.
	Type string `yaml:"type"`
	// Factor is the scale s ≥ 1, or auto: s = max(1, n/L) for each evaluation length n.
	Factor Factor `yaml:"factor"`
	// BetaFast and BetaSlow bound YaRN's correction range, 32 and 1 when unset.
	BetaFast float64 `yaml:"beta_fast,omitempty"`
	BetaSlow float64 `yaml:"beta_slow,omitempty"`
	// Truncate rounds YaRN's correction range to whole dimensions; true when unset.
	Truncate *bool `yaml:"truncate,omitempty"`
}

// Factor is a scaling factor: a number, or Auto to scale by the ratio of the evaluation length
// to the training length.
type Factor struct {
	Auto  bool
	Value float64
}

// ParseFactor reads a factor as written in a config or on a command line.
func ParseFactor(s string) (Factor, error) {
	if s == "auto" {
		return Factor{Auto: true}, nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return Factor{}, fmt.Errorf("%q is neither a number nor auto", s)
	}
	return Factor{Value: v}, nil
}

// At returns the factor in force for n positions with training length l.
func (f Factor) At(n, l int) float64 {
	if f.Auto {
		return math.Max(1, float64(n)/float64(l))
	}
	return f.Value
}

func (f Factor) String() string {
	if f.Auto {
		return "auto"
	}
	return strconv.FormatFloat(f.Value, 'g', -1, 64)
}

// UnmarshalYAML accepts a number or the word auto.
func (f *Factor) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return fmt.Errorf("line %d: factor must be a number or auto", n.Line)
	}
	v, err := ParseFactor(n.Value)
	if err != nil {
		return fmt.Errorf("line %d: factor: %v", n.Line, err)
	}
	*f = v
	return nil
}

// MarshalYAML writes the factor back as it was given.
func (f Factor) MarshalYAML() (any, error) {
	if f.Auto {
		return "auto", nil
	}
	return f.Value, nil
}

// only returns an error naming the first field that is set but not among those the scheme uses.
func (c Config) only(fields ...string) error {
	set := map[string]bool{
		"base":    c.Base != 0,
		"pairing": c.Pairing != "",
		"max_len": c.MaxLen != 0,
		"scaling": c.Scaling != nil,
	}
	uses := map[string]bool{}
	for _, f := range fields {
		uses[f] = true
	}
	for _, f := range []string{"base", "pairing", "max_len", "scaling"} {
		if set[f] && !uses[f] {
			return fmt.Errorf("position.%s: the %s scheme does not take %s", f, c.Scheme, f)
		}
	}
	return nil
}
