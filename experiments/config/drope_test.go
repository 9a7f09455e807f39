package config

import (
	"path/filepath"
	"strings"
	"testing"

	"extrapolate/position"
)

// TestDroPESplit checks where the steps without positions begin: round(fraction·steps) of
// them, halves away from zero, at the end.
func TestDroPESplit(t *testing.T) {
	for _, c := range []struct {
		fraction            float64
		steps, main, nopeAt int
	}{
		{0.125, 1500, 1312, 188}, // 187.5 rounds up
		{0.125, 1600, 1400, 200},
		{0.25, 30, 22, 8}, // 7.5 rounds up
		{0.1, 30, 27, 3},
		{0.3, 10, 7, 3}, // 0.3·10 is 3.0000000000000004 in floating point
		{0.5, 3, 1, 2},
		{0.01, 50, 49, 1}, // 0.5 rounds up to the one step
	} {
		tr := Train{Steps: c.steps, DroPE: &DroPE{Fraction: c.fraction}}
		if m, d := tr.MainSteps(), tr.DroppedSteps(); m != c.main || d != c.nopeAt {
			t.Errorf("fraction %v of %d steps: %d with positions, %d without; want %d and %d", c.fraction, c.steps, m, d, c.main, c.nopeAt)
		}
	}
	if tr := (Train{Steps: 40}); tr.MainSteps() != 40 || tr.DroppedSteps() != 0 {
		t.Errorf("without train.drope: %d and %d steps, want 40 and 0", tr.MainSteps(), tr.DroppedSteps())
	}
}

// TestDroPEConfigErrors checks that a DroPE setting that cannot run is one line naming its
// field, and that the settings it applies to load.
func TestDroPEConfigErrors(t *testing.T) {
	for _, c := range []struct {
		sets []string
		want string
	}{
		{[]string{"train.drope={fraction: 0}"}, "train.drope.fraction: 0, want a fraction in (0, 1)"},
		{[]string{"train.drope={fraction: 1}"}, "train.drope.fraction: 1, want a fraction in (0, 1)"},
		{[]string{"train.drope={fraction: -0.1}"}, "train.drope.fraction: -0.1, want"},
		{[]string{"train.drope={fraction: 1.5}"}, "train.drope.fraction: 1.5, want"},
		{[]string{"train.drope={fraction: .nan}"}, "train.drope.fraction: NaN, want"},
		{[]string{"train.drope={}"}, "train.drope.fraction: 0, want"},
		{[]string{"train.drope={fraction: 0.0001}"}, "train.drope.fraction: 0.0001 of train.steps 1500 rounds to 0 steps"},
		{[]string{"train.drope={fraction: 0.9999}"}, "train.drope.fraction: 0.9999 of train.steps 1500 rounds to 1500 steps"},
		{[]string{"train.drope={fraction: 0.1, ratio: 2}"}, "train.drope.ratio"},
		{[]string{"train.drope={fraction: 0.1}", "position={scheme: alibi}"}, "train.drope: position.scheme alibi adds a bias to the attention scores"},
		{[]string{"train.drope={fraction: 0.1}", "position={scheme: t5}"}, "train.drope: position.scheme t5 adds a bias"},
		{[]string{"train.drope={fraction: 0.1}", "position={scheme: fire}"}, "train.drope: position.scheme fire adds a bias"},
		{[]string{"train.drope={fraction: 0.1}", "position={scheme: learned}"}, "train.drope: position.scheme learned adds a table to the embeddings"},
		{[]string{"train.drope={fraction: 0.1}", "position={scheme: sinusoidal}"}, "train.drope: position.scheme sinusoidal adds a table"},
		{[]string{"train.drope={fraction: 0.1}", "position={scheme: nope}"}, "train.drope: position.scheme nope gives no rotation to drop"},
		{[]string{"train.drope={fraction: 0.1}", "position={layers: [rope, alibi]}"}, "train.drope: position.scheme mix (its layer 1, alibi) adds a bias"},
		{[]string{"train.drope={fraction: 0.1}", "position.scaling={type: yarn, factor: 2}"}, "train.drope: not with position.scaling"},
		{[]string{"train.drope={fraction: 0.1}", "train.finetune={seq_len: 128, steps: 10}"}, "train.drope: not with train.finetune"},
	} {
		_, err := Load(filepath.Join("..", "..", "configs", "rope.yaml"), c.sets)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%v: %v, want one line with %q", c.sets, err, c.want)
		}
	}
	for _, sets := range [][]string{
		{"train.drope={fraction: 0.125}"},
		{"train.drope={fraction: 0.125}", "position={scheme: xpos}"},
		{"train.drope={fraction: 0.125}", "position={scheme: rope, rotary_fraction: 0.5}"},
		{"train.drope={fraction: 0.125}", "position={layers: [rope, nope]}"},
		{"train.drope={fraction: 0.125}", "attention.scale=logn"},
		{"train.drope={fraction: 0.125}", "train.passkey={fraction: 0.1}"},
	} {
		if _, err := Load(filepath.Join("..", "..", "configs", "rope.yaml"), sets); err != nil {
			t.Errorf("%v: %v", sets, err)
		}
	}
}

// TestDroPESchemes checks that a DroPE run trains its main phase with its scheme and is
// evaluated with none, and that a config without the section marshals as it did before it.
func TestDroPESchemes(t *testing.T) {
	path := filepath.Join("..", "..", "configs", "rope.yaml")
	r, err := LoadResolved(path, []string{"train.drope={fraction: 0.125}"})
	if err != nil {
		t.Fatal(err)
	}
	train, eval := r.Schemes()
	if rot, _ := position.RotationAt(train, 8); train.Name() != "rope" || rot == nil {
		t.Errorf("main phase: the %s scheme, rotation %v; want rope's", train.Name(), rot)
	}
	if rot, _ := position.RotationAt(eval, 8); eval.Name() != DroppedScheme || rot != nil {
		t.Errorf("evaluation: the %s scheme, rotation %v; want none", eval.Name(), rot)
	}
	if p := r.Config().EvalPhase().Position; p.Scheme != DroppedScheme || p.Params != nil {
		t.Errorf("EvalPhase's position section %+v, want nope alone", p)
	}
	if p := r.Config().Position; p.Scheme != "rope" {
		t.Errorf("the config's own position section changed: %+v", p)
	}
	plain, err := Load(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(plain.Marshal()), "drope") {
		t.Errorf("a config without train.drope marshals with it:\n%s", plain.Marshal())
	}
	if plain.EvalPhase().Position.Scheme != "rope" {
		t.Error("EvalPhase changed the position section of a config without train.drope")
	}
}
