package strictyaml

import (
	"strings"
	"testing"
)

type section struct {
	Steps   int      `yaml:"steps"`
	Warmup  *int     `yaml:"warmup"`
	Lengths []int    `yaml:"lengths"`
	Seeds   []uint64 `yaml:"seeds"`
	LR      float64  `yaml:"lr"`
}

type config struct {
	Seed  uint64  `yaml:"seed"`
	Train section `yaml:"train"`
}

// TestWholeNumbers checks that a whole-number field takes only an integer, wherever it is: YAML
// would truncate 20.9 to 20, and take 20.0 and 2e1 as 20.
func TestWholeNumbers(t *testing.T) {
	for _, c := range []struct {
		doc, field string
	}{
		{"seed: 2.5", "seed"},
		{"train: {steps: 20.9}", "train.steps"},
		{"train: {steps: 20.0}", "train.steps"},
		{"train: {steps: 2e1}", "train.steps"},
		{"train: {warmup: 1.5}", "train.warmup"},
		{"train: {lengths: [64, 128.5]}", "train.lengths"},
		{"train: {seeds: [1, 2.0]}", "train.seeds"},
	} {
		root, err := Parse("c.yaml", []byte("\n"+c.doc+"\n"))
		if err != nil {
			t.Fatal(err)
		}
		var v config
		err = Decode("c.yaml", root, &v)
		if err == nil || !strings.Contains(err.Error(), c.field+": ") || !strings.Contains(err.Error(), "whole number") || !strings.Contains(err.Error(), "(line 2)") {
			t.Errorf("%s: %v (decoded %+v); want an error naming %s at line 2", c.doc, err, v, c.field)
		}
	}
	root, err := Parse("c.yaml", []byte("seed: 3\ntrain: {steps: 20, warmup: 0x10, lengths: [64], seeds: [+1], lr: 1}\n"))
	if err != nil {
		t.Fatal(err)
	}
	var v config
	if err := Decode("c.yaml", root, &v); err != nil || v.Train.Steps != 20 || *v.Train.Warmup != 16 || v.Train.LR != 1 {
		t.Errorf("integers, and an integer for a float: %v, %+v", err, v)
	}
}

// TestSetOrigin checks that an error in a value given by -set names the -set, not a line of the
// file, and that an error in the file names its line.
func TestSetOrigin(t *testing.T) {
	for _, c := range []struct {
		file, set, want string
	}{
		{"seed: 1\ntrain: {steps: 3}\n", "train.steps=abc", "train.steps: cannot unmarshal !!str `abc` into int (from -set train.steps=abc)"},
		{"seed: 1\n", "train={steps: 1, steps: 2}", "train.steps: given twice (from -set train={steps: 1, steps: 2})"},
		{"seed: 1\n", "train=5", "train: want a section of fields (from -set train=5)"},
		{"seed: 1\n", "train.epochs=3", "train.epochs: unknown field (from -set train.epochs=3)"},
		{"seed: 1\n\n\ntrain:\n  steps: x\n", "seed=2", "train.steps: cannot unmarshal !!str `x` into int (line 5)"},
	} {
		root, err := Parse("c.yaml", []byte(c.file))
		if err != nil {
			t.Fatal(err)
		}
		if err := Set(root, c.set); err != nil {
			t.Fatal(err)
		}
		var v config
		if err := Decode("c.yaml", root, &v); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("-set %s: %v, want %q", c.set, err, c.want)
		}
	}
}

// TestSetEmpty checks that -set key= is refused, naming the key: from a shell it is most likely
// an unset variable, and YAML would read it as null, leaving the default.
func TestSetEmpty(t *testing.T) {
	for _, set := range []string{"train.steps=", "train.steps= "} {
		root, err := Parse("c.yaml", []byte("seed: 1\n"))
		if err != nil {
			t.Fatal(err)
		}
		if err := Set(root, set); err == nil || !strings.Contains(err.Error(), "-set train.steps: empty value") {
			t.Errorf("-set %q: %v, want an error naming train.steps", set, err)
		}
	}
}

// TestSetFromOrigin checks that an error in a setting a comparison's file gives (SetFrom)
// names the setting and its line in that file, not a -set or a line of the run's config, and
// that the setting's node is left as it was for the next run it is applied to.
func TestSetFromOrigin(t *testing.T) {
	comparison, err := Parse("cmp.yaml", []byte("seeds: [1]\nset:\n  train.steps: 20.5\n  train.epochs: 3\n  seed.x: 1\n"))
	if err != nil {
		t.Fatal(err)
	}
	set := comparison.Content[3]
	for _, c := range []struct {
		k    int // the setting's place in set
		want string
	}{
		{0, "train.steps: 20.5, want a whole number (from set of cmp.yaml, line 3)"},
		{1, "train.epochs: unknown field (from set of cmp.yaml, line 4)"},
		{2, "set of cmp.yaml: seed.x: seed is not a section (line 5)"},
	} {
		root, err := Parse("c.yaml", []byte("seed: 1\ntrain: {steps: 3}\n"))
		if err != nil {
			t.Fatal(err)
		}
		key, value := set.Content[2*c.k], set.Content[2*c.k+1]
		err = SetFrom(root, key.Value, value, value.Line, "set of cmp.yaml")
		if err == nil {
			var v config
			err = Decode("c.yaml", root, &v)
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", key.Value, err, c.want)
		}
		if value.LineComment != "" {
			t.Errorf("%s: SetFrom marked the file's node", key.Value)
		}
	}
}
