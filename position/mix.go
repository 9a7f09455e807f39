package position

import (
	"fmt"

	"go.yaml.in/yaml/v3"
)

// PerLayer is a scheme that gives each layer a scheme of its own. The model asks it for each
// layer's, and treats that one as it would a scheme of the whole model, for that layer only.
type PerLayer interface {
	Scheme
	// LayerScheme returns the scheme of layer l.
	LayerScheme(l int) Scheme
}

// Mix gives each layer its own scheme from a pattern repeated over the layers, as Llama 4
// interleaves RoPE layers with layers without positions: position: {layers: [rope, rope, rope,
// nope]}. Each slot is a scheme's name or a section of its own ({scheme: rope, base: 500}), which
// may give the slot a sliding window ({scheme: rope, window: 32}). A scheme that acts on the
// token embeddings cannot fill a slot. A scaling (position.scaling) applies to every slot whose
// scheme takes one; a distance map (position.distance_map) to the whole model.
type Mix struct {
	Layers  []Scheme
	scaling *Scaling
}

func init() { register("mix", newMix) }

func newMix(s Spec) (Scheme, error) {
	var p struct {
		Layers []any `yaml:"layers"`
	}
	if err := s.Config.Decode(&p); err != nil {
		return nil, err
	}
	if len(p.Layers) == 0 {
		return nil, fmt.Errorf("position.layers: want a list of one scheme per layer, repeated over the model's layers")
	}
	if len(p.Layers) > s.Layers {
		return nil, fmt.Errorf("position.layers: %d slots for a model of %d layers", len(p.Layers), s.Layers)
	}
	// The slots' nodes, when the list was read from YAML, so that a slot's error says where
	// it was given.
	var nodes []*yaml.Node
	if n := s.Config.nodes["layers"]; n != nil && n.Kind == yaml.SequenceNode && len(n.Content) == len(p.Layers) {
		nodes = n.Content
	}
	slots := make([]Config, len(p.Layers))
	for i, v := range p.Layers {
		var n *yaml.Node
		if nodes != nil {
			n = nodes[i]
		}
		c, err := slotConfig(v, n)
		if err != nil {
			return nil, fmt.Errorf("position.layers[%d]: %v", i, err)
		}
		slots[i] = c
	}
	m := &Mix{scaling: s.Config.Scaling}
	scalable := false
	for l := 0; l < s.Layers; l++ {
		i := l % len(slots)
		spec := s
		spec.Layers, spec.Config = 1, slots[i]
		ls, err := New(spec)
		if err != nil {
			return nil, fmt.Errorf("position.layers[%d]: %v", i, err)
		}
		if _, takes := ScalingOf(ls); takes && s.Config.Scaling != nil {
			spec.Config.Scaling = s.Config.Scaling
			if ls, err = New(spec); err != nil {
				return nil, fmt.Errorf("position.layers[%d]: %v", i, err)
			}
			scalable = true
		}
		table, err := TableForm(ls)
		if err != nil {
			return nil, fmt.Errorf("position.layers[%d]: %v", i, err)
		}
		if table != Absent || IsPerLayer(ls) {
			return nil, fmt.Errorf("position.layers[%d]: the %s scheme acts on the token embeddings or the layers, not in one layer", i, ls.Name())
		}
		m.Layers = append(m.Layers, ls)
	}
	if s.Config.Scaling != nil && !scalable {
		return nil, fmt.Errorf("position.scaling: no scheme in position.layers takes a scaling")
	}
	return m, nil
}

// slotConfig reads one slot, from its node n when there is one: a scheme's name, or a section
// with scheme and the scheme's fields.
func slotConfig(v any, n *yaml.Node) (Config, error) {
	if name, ok := v.(string); ok {
		c := Config{Scheme: name}
		if name == "mix" {
			return Config{}, fmt.Errorf("a mix cannot fill a slot of a mix: each slot is one layer's scheme")
		}
		return c, nil
	}
	if n == nil {
		n = new(yaml.Node)
		if err := n.Encode(v); err != nil {
			return Config{}, err
		}
	}
	var c Config
	if err := n.Decode(&c); err != nil {
		return Config{}, err
	}
	if _, nested := c.Params["layers"]; nested || c.Scheme == "mix" {
		// Checked here, before the slot's scheme is built for one layer, which would fail
		// for a reason that is not the mistake.
		return Config{}, fmt.Errorf("a mix cannot fill a slot of a mix: each slot is one layer's scheme")
	}
	if c.Scheme == "" {
		return Config{}, fmt.Errorf("want a scheme's name or a section with scheme")
	}
	if c.Scaling != nil {
		return Config{}, fmt.Errorf("a scaling applies to the whole model: give it as position.scaling")
	}
	if c.DistanceMap != nil {
		return Config{}, fmt.Errorf("a distance map applies to the whole model: give it as position.distance_map")
	}
	return c, nil
}

// Name is mix.
func (*Mix) Name() string { return "mix" }

// LayerScheme returns layer l's scheme.
func (m *Mix) LayerScheme(l int) Scheme { return m.Layers[l] }

// Scaling returns the scaling applied to the slots that take one.
func (m *Mix) Scaling() *Scaling { return m.scaling }

// CheckLength checks n positions against every layer's scheme that bounds its lengths.
func (m *Mix) CheckLength(n int) error {
	for l, s := range m.Layers {
		if err := CheckLength(s, n); err != nil {
			return fmt.Errorf("layer %d: %w", l, err)
		}
	}
	return nil
}

// Windowed says whether the scheme c names has a sliding window, or, for a mix, whether some
// layer's does: read from the config alone, before any scheme is built (a comparison's
// selectors and styles ask it of a run's config).
func (c Config) Windowed() bool {
	if c.Window > 0 {
		return true
	}
	var p struct {
		Layers []any `yaml:"layers"`
	}
	if c.Scheme != "mix" || c.Decode(&p) != nil {
		return false
	}
	for _, v := range p.Layers {
		if slot, err := slotConfig(v, nil); err == nil && slot.Window > 0 {
			return true
		}
	}
	return false
}
