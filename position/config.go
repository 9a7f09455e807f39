package position

import (
	"fmt"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Config is the position section of a run's config: the scheme's name, an optional RoPE scaling,
// and the scheme's own fields, which the scheme declares and decodes itself (Config.Decode), so
// that a scheme in another package needs no field here and a misplaced field is an error rather
// than silently ignored.
type Config struct {
	// Scheme names a registered scheme: nope, learned, sinusoidal, rope, alibi, t5, ...
	Scheme string
	// Scaling stretches a Scalable scheme (RoPE) to lengths beyond the training length. It is
	// a field of its own because the protocol applies it only when evaluating.
	Scaling *Scaling
	// Params holds the scheme's other fields by name, as decoded from YAML.
	Params map[string]any
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

// UnmarshalYAML reads the section: scheme and scaling, and every other field into Params.
func (c *Config) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("line %d: position: want a section of fields", n.Line)
	}
	out := Config{Scheme: c.Scheme}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if seen[k.Value] {
			return fmt.Errorf("line %d: position.%s: given twice", k.Line, k.Value)
		}
		seen[k.Value] = true
		var err error
		switch k.Value {
		case "scheme":
			err = v.Decode(&out.Scheme)
		case "scaling":
			if v.Tag == "!!null" {
				continue
			}
			out.Scaling = new(Scaling)
			err = v.Decode(out.Scaling)
		default:
			var x any
			if err = v.Decode(&x); err == nil {
				if out.Params == nil {
					out.Params = map[string]any{}
				}
				out.Params[k.Value] = x
			}
		}
		if err != nil {
			return fmt.Errorf("line %d: position.%s: %v", k.Line, k.Value, err)
		}
	}
	*c = out
	return nil
}

// MarshalYAML writes the section back: scheme, the scheme's fields sorted, then scaling.
func (c Config) MarshalYAML() (any, error) {
	n := &yaml.Node{Kind: yaml.MappingNode}
	add := func(k string, v any) error {
		var val yaml.Node
		if err := val.Encode(v); err != nil {
			return err
		}
		n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: k}, &val)
		return nil
	}
	if err := add("scheme", c.Scheme); err != nil {
		return nil, err
	}
	keys := make([]string, 0, len(c.Params))
	for k := range c.Params {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if err := add(k, c.Params[k]); err != nil {
			return nil, err
		}
	}
	if c.Scaling != nil {
		if err := add("scaling", c.Scaling); err != nil {
			return nil, err
		}
	}
	return n, nil
}

// With returns a copy of c with the scheme's field name set to v.
func (c Config) With(name string, v any) Config {
	p := make(map[string]any, len(c.Params)+1)
	for k, x := range c.Params {
		p[k] = x
	}
	p[name] = v
	c.Params = p
	return c
}

// Decode sets the fields of the struct dst points to from the scheme's fields, by their yaml
// tags. A field dst does not have, or a value of the wrong type, is an error naming the field
// as position.NAME; fields left out keep the values dst holds.
func (c Config) Decode(dst any) error {
	v := reflect.ValueOf(dst)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return fmt.Errorf("position: Decode needs a pointer to a struct, not %T", dst)
	}
	v = v.Elem()
	fields := map[string]int{}
	var names []string
	for i := 0; i < v.NumField(); i++ {
		tag, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("yaml"), ",")
		if tag != "" && tag != "-" {
			fields[tag] = i
			names = append(names, tag)
		}
	}
	sort.Strings(names)
	keys := make([]string, 0, len(c.Params))
	for k := range c.Params {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		i, ok := fields[k]
		if !ok {
			takes := "no fields"
			if len(names) > 0 {
				takes = strings.Join(names, ", ")
			}
			return fmt.Errorf("position.%s: the %s scheme does not take %s (it takes %s)", k, c.Scheme, k, takes)
		}
		var node yaml.Node
		if err := node.Encode(c.Params[k]); err != nil {
			return fmt.Errorf("position.%s: %v", k, err)
		}
		if err := node.Decode(v.Field(i).Addr().Interface()); err != nil {
			msg := strings.Join(strings.Fields(strings.TrimPrefix(err.Error(), "yaml: unmarshal errors:")), " ")
			return fmt.Errorf("position.%s: %s", k, strings.TrimPrefix(msg, "line 1: "))
		}
	}
	return nil
}
