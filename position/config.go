package position

import (
	"fmt"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"extrapolate/internal/strictyaml"
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
	// DistanceMap changes which keys each query sees and at what distance (distancemap.go).
	// Like Scaling, it is a field of its own because it applies only when evaluating.
	DistanceMap *DistanceMapConfig
	// Window is the number of keys, the query's own included, that each query attends to, in
	// training and evaluation alike (window.go); 0 for all of them. It is a field of its own
	// because it applies to any scheme, on the section of the scheme or of a mix's slot.
	Window int
	// Params holds the scheme's other fields by name, as decoded from YAML.
	Params map[string]any

	// nodes holds the YAML node each of Params was read from, so that an error in it says
	// where it was given; With drops a field's node.
	nodes map[string]*yaml.Node
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

	// nodes holds the YAML node each of Params was read from, as Config's.
	nodes map[string]*yaml.Node
}

// DistanceMapConfig is the position.distance_map section: a registered distance map's name and
// its own fields, which its factory declares and decodes itself (DistanceMapConfig.Decode), as a
// scheme does its fields.
type DistanceMapConfig struct {
	// Type is a registered distance map: rerope, leaky_rerope, self_extend, lm_infinite,
	// streaming, string, dual_chunk, ...
	Type string
	// Params holds the map's own fields by name, such as ReRoPE's window.
	Params map[string]any

	// nodes holds the YAML node each of Params was read from, as Config's.
	nodes map[string]*yaml.Node
}

// UnmarshalYAML reads the section: type, and every other field into Params.
func (c *DistanceMapConfig) UnmarshalYAML(n *yaml.Node) error {
	var out DistanceMapConfig
	_, err := unmarshalFields(n, "position.distance_map.", map[string]any{"type": &out.Type}, &out.Params, &out.nodes)
	if err != nil {
		return err
	}
	*c = out
	return nil
}

// MarshalYAML writes the section back: type, then the map's fields sorted.
func (c DistanceMapConfig) MarshalYAML() (any, error) {
	return marshalFields([]field{{"type", c.Type}}, c.Params)
}

// Decode sets the fields of the struct dst points to from the map's fields, by their yaml tags,
// as Config.Decode does, naming a bad field position.distance_map.NAME.
func (c DistanceMapConfig) Decode(dst any) error {
	return decodeParams("position.distance_map.", "the "+c.Type+" distance map", c.Params, c.nodes, dst)
}

// String names the map as reports do: its type, and the fields given, sorted, as
// rerope(window=16); the defaults are the map's own and are not repeated.
func (c DistanceMapConfig) String() string { return withFields(c.Type, c.Params) }

// withFields names a type with the fields given, sorted, as rerope(window=16).
func withFields(typ string, params map[string]any) string {
	if len(params) == 0 {
		return typ
	}
	keys := make([]string, 0, len(params))
	for k := range params {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for i, k := range keys {
		keys[i] = fmt.Sprintf("%s=%v", k, params[k])
	}
	return typ + "(" + strings.Join(keys, ", ") + ")"
}

// Given says whether the map's field name was set, for a default that depends on other fields.
func (c DistanceMapConfig) Given(name string) bool {
	_, ok := c.Params[name]
	return ok
}

// UnmarshalYAML reads the section: type and factor, and every other field into Params.
func (c *Scaling) UnmarshalYAML(n *yaml.Node) error {
	var out Scaling
	_, err := unmarshalFields(n, "position.scaling.", map[string]any{"type": &out.Type, "factor": &out.Factor}, &out.Params, &out.nodes)
	if err != nil {
		return err
	}
	*c = out
	return nil
}

// unmarshalFields decodes a mapping: each key of known into the value it points to, and every
// other key into params, keeping its node in nodes. A repeated key or a value of the wrong type
// is an error naming the field prefix+key and where it was given. It returns the keys it saw.
func unmarshalFields(n *yaml.Node, prefix string, known map[string]any, params *map[string]any, nodes *map[string]*yaml.Node) (map[string]bool, error) {
	if n.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s: want a section of fields (%s)", strings.TrimSuffix(prefix, "."), strictyaml.Where(n))
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if seen[k.Value] {
			return nil, fmt.Errorf("%s%s: given twice (%s)", prefix, k.Value, strictyaml.Where(k))
		}
		seen[k.Value] = true
		if dst, ok := known[k.Value]; ok {
			if err := strictyaml.DecodeNode(v, dst); err != nil {
				if strings.HasPrefix(err.Error(), prefix+k.Value) {
					return nil, err // the field's own decoder named it, and where
				}
				return nil, fmt.Errorf("%s%s: %v (%s)", prefix, k.Value, err, strictyaml.Where(v))
			}
			continue
		}
		var x any
		if err := strictyaml.DecodeNode(v, &x); err != nil {
			return nil, fmt.Errorf("%s%s: %v (%s)", prefix, k.Value, err, strictyaml.Where(v))
		}
		if *params == nil {
			*params, *nodes = map[string]any{}, map[string]*yaml.Node{}
		}
		(*params)[k.Value], (*nodes)[k.Value] = x, v
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
		return fmt.Errorf("position.scaling.factor: want a number or auto (%s)", strictyaml.Where(n))
	}
	v, err := ParseFactor(n.Value)
	if err != nil {
		return fmt.Errorf("position.scaling.factor: %v (%s)", err, strictyaml.Where(n))
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

// UnmarshalYAML reads the section: scheme, scaling, distance map and window, and every other
// field into Params.
func (c *Config) UnmarshalYAML(n *yaml.Node) error {
	out := Config{Scheme: c.Scheme}
	var scaling *Scaling // a null scaling leaves it nil
	var distanceMap *DistanceMapConfig
	known := map[string]any{"scheme": &out.Scheme, "scaling": &scaling, "distance_map": &distanceMap, "window": &out.Window}
	seen, err := unmarshalFields(n, "position.", known, &out.Params, &out.nodes)
	if err != nil {
		return err
	}
	out.Scaling, out.DistanceMap = scaling, distanceMap
	if _, ok := out.Params["layers"]; ok && !seen["scheme"] {
		out.Scheme = "mix" // position: {layers: [...]} needs no scheme
	}
	*c = out
	return nil
}

// MarshalYAML writes the section back: scheme, the scheme's fields sorted, then window, scaling
// and distance map, each when set, so that a section without them reads as it always has.
func (c Config) MarshalYAML() (any, error) {
	n, err := marshalFields([]field{{"scheme", c.Scheme}}, c.Params)
	if err != nil {
		return nil, err
	}
	var tail []field
	if c.Window != 0 {
		tail = append(tail, field{"window", c.Window})
	}
	if c.Scaling != nil {
		tail = append(tail, field{"scaling", c.Scaling})
	}
	if c.DistanceMap != nil {
		tail = append(tail, field{"distance_map", c.DistanceMap})
	}
	for _, f := range tail {
		var val yaml.Node
		if err := val.Encode(f.value); err != nil {
			return nil, err
		}
		n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: f.name}, &val)
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
	if _, ok := c.nodes[name]; ok {
		// The value no longer comes from the node.
		nodes := make(map[string]*yaml.Node, len(c.nodes))
		for k, n := range c.nodes {
			if k != name {
				nodes[k] = n
			}
		}
		c.nodes = nodes
	}
	return c
}

// Decode sets the fields of the struct dst points to from the scheme's fields, by their yaml
// tags. A field dst does not have, or a value of the wrong type, is an error naming the field
// as position.NAME and where it was given; fields left out keep the values dst holds.
func (c Config) Decode(dst any) error {
	return decodeParams("position.", "the "+c.Scheme+" scheme", c.Params, c.nodes, dst)
}

// decodeParams decodes params into the struct dst points to, naming a bad field prefix+name, and
// saying where it was given when nodes holds its node.
func decodeParams(prefix, owner string, params map[string]any, nodes map[string]*yaml.Node, dst any) error {
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
		where := ""
		if n, ok := nodes[k]; ok {
			where = " (" + strictyaml.Where(n) + ")"
		}
		i, ok := fields[k]
		if !ok {
			takes := "no fields"
			if len(names) > 0 {
				takes = strings.Join(names, ", ")
			}
			return fmt.Errorf("%s%s: %s does not take %s%s; it takes %s", prefix, k, owner, k, where, takes)
		}
		field := v.Field(i)
		if err := integersOnly(params[k], field.Type()); err != nil {
			return fmt.Errorf("%s%s: %v%s", prefix, k, err, where)
		}
		var node yaml.Node
		if err := node.Encode(params[k]); err != nil {
			return fmt.Errorf("%s%s: %v%s", prefix, k, err, where)
		}
		if err := strictyaml.DecodeNode(&node, field.Addr().Interface()); err != nil {
			return fmt.Errorf("%s%s: %v%s", prefix, k, err, where)
		}
	}
	return nil
}

// integersOnly refuses a value that is not an integer for a whole-number field, as
// strictyaml.DecodeNode does for a node: a param holds what YAML gave (float64 for 3.5 or 20.0,
// int for 20), and encoding float64(20) again would make an integer of it.
func integersOnly(x any, t reflect.Type) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		if f, ok := x.(float64); ok {
			return fmt.Errorf("%s, want a whole number", formatFloat(f))
		}
		if f, ok := x.(float32); ok {
			return fmt.Errorf("%s, want a whole number", formatFloat(float64(f)))
		}
	case reflect.Slice, reflect.Array:
		if xs, ok := x.([]any); ok {
			for _, e := range xs {
				if err := integersOnly(e, t.Elem()); err != nil {
					return err
				}
			}
		}
	case reflect.Map:
		if m, ok := x.(map[string]any); ok {
			for _, e := range m {
				if err := integersOnly(e, t.Elem()); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// formatFloat writes a float as a number that is not a whole one: 20 as 20.0.
func formatFloat(f float64) string {
	s := strconv.FormatFloat(f, 'g', -1, 64)
	if !strings.ContainsAny(s, ".eIN") {
		s += ".0"
	}
	return s
}
