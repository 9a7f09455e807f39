package position

import (
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// fromYAML reads a position section as a config file would give it.
func fromYAML(t *testing.T, doc string) Config {
	t.Helper()
	var c Config
	if err := yaml.Unmarshal([]byte(doc), &c); err != nil {
		t.Fatal(err)
	}
	return c
}

// TestFieldsWholeNumbers checks that a scheme's or a scaling's whole-number field takes only an
// integer, read from YAML or set by a program: yaml.v3 would give T5 3 buckets for 3.5.
func TestFieldsWholeNumbers(t *testing.T) {
	spec := Spec{DModel: 8, Heads: 2, Layers: 2, TrainLen: 16}
	for _, c := range []struct {
		config Config
		want   string
	}{
		{fromYAML(t, "{scheme: t5, buckets: 3.5}"), "position.buckets: 3.5, want a whole number"},
		{fromYAML(t, "{scheme: t5, buckets: 4.0}"), "position.buckets: 4.0, want a whole number"},
		{fromYAML(t, "{scheme: learned, max_len: 16.5}"), "position.max_len: 16.5, want a whole number"},
		{fromYAML(t, "{layers: [{scheme: t5, max_distance: 20.5}]}"), "position.max_distance: 20.5, want a whole number"},
		{Config{Scheme: "t5"}.With("buckets", 8.0), "position.buckets: 8.0, want a whole number"},
		{fromYAML(t, "{scheme: rope, scaling: {type: llama3, factor: 2, original_max_position_embeddings: 16.5}}"), "position.scaling.original_max_position_embeddings: 16.5, want a whole number"},
	} {
		spec.Config = c.config
		_, err := New(spec)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.config, err, c.want)
		}
	}
	spec.Config = Config{Scheme: "t5"}.With("buckets", 8)
	if _, err := New(spec); err != nil {
		t.Errorf("8 buckets: %v", err)
	}
}

// TestFieldErrorsSayWhere checks that a bad value of a scheme's or a scaling's field is
// reported at its line, not at "line 0" of the node it is copied into.
func TestFieldErrorsSayWhere(t *testing.T) {
	spec := Spec{DModel: 8, Heads: 2, Layers: 2, TrainLen: 16}
	for _, c := range []struct {
		doc, want string
	}{
		{"scheme: t5\n\n\nbuckets: abc\n", "position.buckets: cannot unmarshal !!str `abc` into int (line 4)"},
		{"scheme: rope\nscaling:\n  type: yarn\n  factor: 2\n  beta_fast: abc\n", "position.scaling.beta_fast: cannot unmarshal !!str `abc` into float64 (line 5)"},
		{"scheme: rope\nbogus: 1\n", "position.bogus: the rope scheme does not take bogus (line 2)"},
		{"layers:\n  - rope\n  - {scheme: t5,\n     buckets: x}\n", "position.buckets: cannot unmarshal !!str `x` into int (line 4)"},
	} {
		spec.Config = fromYAML(t, c.doc)
		_, err := New(spec)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "line 0") {
			t.Errorf("%q: %v, want %q", c.doc, err, c.want)
		}
	}
}
