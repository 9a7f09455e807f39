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

// Scaling is a RoPE context-extension method, named as in Hugging Face transformers: its type,
// its factor, and the type's own fields, which the type declares in the scaling registry
// (scaling.go).
type Scaling struct {
	// Type is a registered scaling type: linear (position interpolation), ntk, dynamic_ntk,
	// yarn, llama3, ...
	Type string
	// Factor is the scale s ≥ 1, or auto: s = max(1, n/L) for each evaluation length n.
	Factor Factor
	// Params holds the type's own fields by name, such as YaRN's beta_fast.
	Params map[string]any

	// decoded holds Params decoded into the type's struct, set by check.
	decoded any
}

// UnmarshalYAML reads the section: type and factor, and every other field into Params.
func (c *Scaling) UnmarshalYAML(n *yaml.Node) error {
	var out Scaling
	_, err := unmarshalFields(n, "position.scaling.", map[string]any{"type": &out.Type, "factor": &out.Factor}, &out.Params)
	if err != nil {
		return err
	}
	*c = out
	return nil
}

// unmarshalFields decodes a mapping: each key of known into the value it points to, and every
// other key into params. A repeated key or a value of the wrong type is an error naming the
// field prefix+key. It returns the keys it saw.
func unmarshalFields(n *yaml.Node, prefix string, known map[string]any, params *map[string]any) (map[string]bool, error) {
	if n.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("line %d: %s: want a section of fields", n.Line, strings.TrimSuffix(prefix, "."))
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if seen[k.Value] {
			return nil, fmt.Errorf("line %d: %s%s: given twice", k.Line, prefix, k.Value)
		}
		seen[k.Value] = true
		var err error
		if dst, ok := known[k.Value]; ok {
			err = v.Decode(dst)
		} else {
			var x any
			if err = v.Decode(&x); err == nil {
				if *params == nil {
					*params = map[string]any{}
				}
				(*params)[k.Value] = x
			}
		}
		if err != nil {
			return nil, fmt.Errorf("line %d: %s%s: %v", k.Line, prefix, k.Value, err)
		}
	}
	return seen, nil
}

// MarshalYAML writes the section back: type, factor, then the type's fields sorted.
func (c Scaling) MarshalYAML() (any, error) {
	return marshalFields([]field{{"type", c.Type}, {"factor", c.Factor}}, c.Params)
}

type field struct {
	name  string
	value any
}

// marshalFields writes a mapping of the given fields, then params sorted by name.
func marshalFields(first []field, params map[string]any) (*yaml.Node, error) {
	n := &yaml.Node{Kind: yaml.MappingNode}
	keys := make([]string, 0, len(params))
	for k := range params {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		first = append(first, field{k, params[k]})
	}
	for _, f := range first {
		var val yaml.Node
		if err := val.Encode(f.value); err != nil {
			return nil, err
		}
		n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: f.name}, &val)
	}
	return n, nil
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
	out := Config{Scheme: c.Scheme}
	var scaling *Scaling // a null scaling leaves it nil
	seen, err := unmarshalFields(n, "position.", map[string]any{"scheme": &out.Scheme, "scaling": &scaling}, &out.Params)
	if err != nil {
		return err
	}
	out.Scaling = scaling
	if _, ok := out.Params["layers"]; ok && !seen["scheme"] {
		out.Scheme = "mix" // position: {layers: [...]} needs no scheme
	}
	*c = out
	return nil
}

// MarshalYAML writes the section back: scheme, the scheme's fields sorted, then scaling.
func (c Config) MarshalYAML() (any, error) {
	n, err := marshalFields([]field{{"scheme", c.Scheme}}, c.Params)
	if err != nil || c.Scaling == nil {
		return n, err
	}
	var val yaml.Node
	if err := val.Encode(c.Scaling); err != nil {
		return nil, err
	}
	n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: "scaling"}, &val)
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
	return decodeParams("position.", "the "+c.Scheme+" scheme", c.Params, dst)
}

// decodeParams decodes params into the struct dst points to, naming a bad field prefix+name.
func decodeParams(prefix, owner string, params map[string]any, dst any) error {
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
	keys := make([]string, 0, len(params))
	for k := range params {
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
			return fmt.Errorf("%s%s: %s does not take %s (it takes %s)", prefix, k, owner, k, takes)
		}
		var node yaml.Node
		if err := node.Encode(params[k]); err != nil {
			return fmt.Errorf("%s%s: %v", prefix, k, err)
		}
		if err := node.Decode(v.Field(i).Addr().Interface()); err != nil {
			msg := strings.Join(strings.Fields(strings.TrimPrefix(err.Error(), "yaml: unmarshal errors:")), " ")
			return fmt.Errorf("%s%s: %s", prefix, k, strings.TrimPrefix(msg, "line 1: "))
		}
	}
	return nil
}
