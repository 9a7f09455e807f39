// Package duplicate is a task registered from its own package, as examples/logbias is a
// position scheme: duplicate string, from the Chomsky-hierarchy tasks of Ruoss et al. 2023
// ("Randomized Positional Encodings Boost Length Generalization of Transformers",
// google-deepmind/randomized_positional_encodings), where the answer is the string written
// twice: "abc=abcabc.". Import it for its side effect in plugins/plugins.go, which every
// command imports (_ "extrapolate/examples/duplicate"); then task: {names: [duplicate]} works in
// any config or comparison.
package duplicate

import (
	"bytes"

	"extrapolate/internal/rng"
	"extrapolate/task"
)

func init() { task.Register(Duplicate{}) }

// Duplicate writes a string of lowercase letters twice; the size is its length.
type Duplicate struct{}

func (Duplicate) Name() string { return "duplicate" }
func (Duplicate) Source() string {
	return "Ruoss et al. 2023, Randomized Positional Encodings Boost Length Generalization of Transformers (google-deepmind/randomized_positional_encodings): duplicate string"
}

// Sizes train on 1 to 10 letters, the window of the largest 10+10+1+20+1-1 = 41 tokens, and
// score to 4x.
func (Duplicate) Sizes() task.Sizes {
	return task.Sizes{Min: 1, Max: 10, Test: []int{5, 10, 20, 30, 40}}
}

// MaxLen is the string, "=", the string twice and ".".
func (Duplicate) MaxLen(size int) int { return 3*size + 2 }

func (Duplicate) Generate(g *rng.SplitMix64, size int) task.Example {
	s := task.Letters(g, size)
	answer := append(bytes.Repeat(s, 2), '.')
	return task.QA(append(s, '='), answer)
}
