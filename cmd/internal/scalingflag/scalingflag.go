// Package scalingflag gives a command one flag per field of the registered RoPE scaling types
// (-beta-fast for YaRN's beta_fast, -low-freq-factor for Llama 3's low_freq_factor, ...), so that
// a scaling registered with position.RegisterScaling is usable from the command line without
// editing the commands. It is the commands' concern, under cmd/internal where only they import it,
// above position, whose registry of scalings it reads.
package scalingflag

import (
	"flag"
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"

	"extrapolate/position"
)

// Set holds the flags of every scaling field.
type Set struct {
	values map[string]*string  // by field name
	types  map[string][]string // the types that take each field
}

// Register adds the flags to fs.
func Register(fs *flag.FlagSet) *Set {
	s := &Set{values: map[string]*string{}, types: map[string][]string{}}
	var order []string
	defaults := map[string][]string{}
	for _, p := range position.ScalingParams() {
		if _, ok := s.types[p.Name]; !ok {
			order = append(order, p.Name)
		}
		s.types[p.Name] = append(s.types[p.Name], p.Type)
		defaults[p.Name] = append(defaults[p.Name], fmt.Sprintf("%v for %s", p.Default, p.Type))
	}
	for _, name := range order {
		s.values[name] = fs.String(Flag(name), "", fmt.Sprintf("the scaling field %s (default %s)", name, strings.Join(defaults[name], ", ")))
	}
	return s
}

// Flag is the flag name of a scaling field: beta_fast is -beta-fast.
func Flag(field string) string { return strings.ReplaceAll(field, "_", "-") }

// Scaling returns a scaling of type typ with factor f and the fields given on the command line
// that typ takes.
func (s *Set) Scaling(typ string, f position.Factor) *position.Scaling {
	sc := &position.Scaling{Type: typ, Factor: f}
	for name, v := range s.values {
		if *v == "" || !takes(s.types[name], typ) {
			continue
		}
		if sc.Params == nil {
			sc.Params = map[string]any{}
		}
		var x any
		if err := yaml.Unmarshal([]byte(*v), &x); err != nil || x == nil {
			x = *v // the scaling's own check names the field if a string will not do
		}
		sc.Params[name] = x
	}
	return sc
}

// Unused returns the first flag given that none of the types takes, for an error.
func (s *Set) Unused(types []string) string {
	for name, v := range s.values {
		if *v == "" {
			continue
		}
		used := false
		for _, t := range types {
			used = used || takes(s.types[name], t)
		}
		if !used {
			return "-" + Flag(name)
		}
	}
	return ""
}

func takes(types []string, typ string) bool {
	for _, t := range types {
		if t == typ {
			return true
		}
	}
	return false
}
