package claims

import (
	"path/filepath"
	"reflect"
	"testing"

	"extrapolate/experiments/config"
)

// TestSelectors: each selector picks the committed configs it names, and no variant of them.
func TestSelectors(t *testing.T) {
	load := func(name string) config.Config {
		c, err := config.Load(filepath.Join("..", "..", "configs", name+".yaml"), nil)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	all := []string{"nope", "learned", "sinusoidal", "rope", "rope_pi", "rope_ntk", "rope_dynamic_ntk", "rope_yarn", "rope_llama3", "rope_partial", "xpos", "rope_nope_mix", "alibi", "t5", "kerple", "fire", "nope_logn", "rope_logn", "nope_logn_train", "rope_logn_train", "nope_ssmax", "rope_drope", "rope_randomized", "rope_gated", "rope_softpick", "rope_sinks", "swan_layout", "rope_gptoss"}
	want := map[string][]string{
		"plain RoPE":       {"rope"},
		"plain NoPE":       {"nope"},
		"plain ALiBi":      {"alibi"},
		"plain sinusoidal": {"sinusoidal"},
		"RoPE":             {"rope", "rope_pi", "rope_ntk", "rope_dynamic_ntk", "rope_yarn", "rope_llama3", "rope_partial", "rope_logn", "rope_logn_train", "rope_randomized", "rope_gated", "rope_softpick", "rope_sinks"},
		"RoPE/NoPE mix":    {"rope_nope_mix"},
		// A layer's window makes the mix SWAN-GPT's layout, and not the plain mix.
		"SWAN-GPT's layout": {"swan_layout"},
		// linear (PI) needs its fine-tune: it rescues nothing without.
		"RoPE with a scaling meant to work without fine-tuning": {"rope_ntk", "rope_dynamic_ntk", "rope_yarn", "rope_llama3"},
	}
	for _, s := range []selector{plainRoPE, plainNoPE, plainALiBi, plainSinusoidal, anyRoPE, ropeNoPEMix, swanLayout, rescuedRoPE} {
		var got []string
		for _, name := range all {
			if s.matches(load(name)) {
				got = append(got, name)
			}
		}
		if !reflect.DeepEqual(got, want[s.Name]) {
			t.Errorf("%s picks %v, want %v", s.Name, got, want[s.Name])
		}
	}
	// A distance map, a window or drawn position ids make a variant: none of the selectors that
	// pick a scheme as it is (or a scaled RoPE, or the mix) takes a run through one.
	for _, v := range []struct{ name, set string }{
		{"rope", "position.distance_map={type: rerope}"},
		{"rope", "position.window=16"},
		{"rope_yarn", "position.distance_map={type: self_extend}"},
		{"rope_nope_mix", "position.distance_map={type: rerope}"},
		{"rope", "train.positions={type: pose, scaled_max_position_embeddings: 256}"},
		{"rope_nope_mix", "train.positions={type: randomized, noise_max_length: 256}"},
		{"swan_layout", "attention.sinks=true"},
		{"swan_layout", "position.distance_map={type: rerope}"},
		{"rope", "attention.gate=headwise"},
		{"rope", "attention.normaliser=softpick"},
		{"rope", "attention.sinks=true"},
	} {
		c, err := config.Load(filepath.Join("..", "..", "configs", v.name+".yaml"), []string{v.set})
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range []selector{plainRoPE, rescuedRoPE, ropeNoPEMix, swanLayout} {
			if s.matches(c) {
				t.Errorf("%s with %s: picked as %s", v.name, v.set, s.Name)
			}
		}
	}
	// A mix is picked by the set of its layers' schemes, in any order and number.
	for layers, ok := range map[string]bool{"[nope, rope, rope]": true, "[rope, alibi]": false, "[rope, rope]": false, "[rope, nope, alibi]": false, "[{scheme: rope, base: 500}, nope]": true} {
		c, err := config.Load(filepath.Join("..", "..", "configs", "rope_nope_mix.yaml"), []string{"position.layers=" + layers, "model.layers=3"})
		if err != nil {
			t.Fatal(err)
		}
		if got := ropeNoPEMix.matches(c); got != ok {
			t.Errorf("layers %s: picked %v, want %v", layers, got, ok)
		}
	}
}
