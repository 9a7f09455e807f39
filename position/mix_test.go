package position

import (
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

func TestMixRepeatsItsPattern(t *testing.T) {
	var c Config
	if err := yaml.Unmarshal([]byte("{layers: [rope, {scheme: rope, base: 500}, nope], scaling: {type: ntk, factor: 2}}"), &c); err != nil {
		t.Fatal(err)
	}
	if c.Scheme != "mix" {
		t.Fatalf("scheme %q, want mix for a section with layers", c.Scheme)
	}
	s, err := New(Spec{DModel: 8, Heads: 2, Layers: 7, TrainLen: 16, Config: c})
	if err != nil {
		t.Fatal(err)
	}
	m := s.(PerLayer)
	for l, want := range []string{"rope", "rope", "nope", "rope", "rope", "nope", "rope"} {
		if got := m.LayerScheme(l).Name(); got != want {
			t.Fatalf("layer %d: %s, want %s", l, got, want)
		}
	}
	// Slot 1 keeps its own base; the scaling reaches every RoPE slot.
	r1 := m.LayerScheme(4).(*RoPE)
	if r1.Base != 500 || r1.Scaling() == nil || r1.Scaling().Type != "ntk" {
		t.Fatalf("layer 4: base %g, scaling %+v", r1.Base, r1.Scaling())
	}
}

func TestMixBadConfigs(t *testing.T) {
	for _, c := range []struct {
		layers []any
		want   string
	}{
		{nil, "position.layers"},
		{[]any{"learned"}, "position.layers[0]"},
		{[]any{"rope", "nonesuch"}, "position.layers[1]"},
		{[]any{"rope", map[string]any{"base": 3}}, "position.layers[1]"},
		{[]any{"rope", "rope", "rope", "rope", "rope"}, "position.layers"},
	} {
		_, err := New(Spec{DModel: 8, Heads: 2, Layers: 4, TrainLen: 16, Config: Config{Scheme: "mix", Params: map[string]any{"layers": c.layers}}})
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%v: %v, want an error naming %s", c.layers, err, c.want)
		}
	}
	_, err := New(Spec{DModel: 8, Heads: 2, Layers: 4, TrainLen: 16, Config: Config{Scheme: "mix", Params: map[string]any{"layers": []any{"nope", "alibi"}}, Scaling: &Scaling{Type: "ntk", Factor: Factor{Value: 2}}}})
	if err == nil || !strings.Contains(err.Error(), "position.scaling") {
		t.Errorf("a scaling with no RoPE slot: %v", err)
	}
}

// TestMixNotNested checks that a mix in a slot of a mix is refused for that reason, whatever
// its number of slots, rather than for having more slots than the one layer a slot is.
func TestMixNotNested(t *testing.T) {
	for _, doc := range []string{"{layers: [{layers: [rope, nope]}, nope]}", "{layers: [mix]}", "{layers: [{scheme: mix, layers: [rope]}]}"} {
		_, err := New(Spec{DModel: 8, Heads: 2, Layers: 2, TrainLen: 16, Config: fromYAML(t, doc)})
		if err == nil || !strings.Contains(err.Error(), "position.layers[0]: a mix cannot fill a slot of a mix") {
			t.Errorf("%s: %v, want it refused as a nested mix", doc, err)
		}
	}
}

// TestWindowed: a config names a sliding window when its scheme has one, or a layer of its mix
// does; a mix whose layers have none, or a scheme without, does not.
func TestWindowed(t *testing.T) {
	for _, c := range []struct {
		cfg  Config
		want bool
	}{
		{Config{Scheme: "rope"}, false},
		{Config{Scheme: "rope", Window: 16}, true},
		{Config{Scheme: "mix", Params: map[string]any{"layers": []any{"rope", "nope"}}}, false},
		{Config{Scheme: "mix", Params: map[string]any{"layers": []any{map[string]any{"scheme": "rope", "window": 16}, "nope"}}}, true},
		{Config{Scheme: "mix", Params: map[string]any{"layers": []any{map[string]any{"scheme": "rope", "base": 500}, "nope"}}}, false},
	} {
		if got := c.cfg.Windowed(); got != c.want {
			t.Errorf("%+v: windowed %v, want %v", c.cfg, got, c.want)
		}
	}
}
