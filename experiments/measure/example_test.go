package measure_test

import (
	"fmt"
	"slices"

	"extrapolate/experiments/measure"
)

// steps is a measure of one's own at its smallest: a name and the files it writes in a run
// folder (none). It adds Selector, Starter, Summarizer or Reporter for what it does
// (docs/measures.md); examples/accuracy is a whole one.
type steps struct{}

func (steps) Name() string    { return "example_steps" }
func (steps) Files() []string { return nil }

// A measure registers itself from its package's init function, after the built-in ones; a
// config then names it in eval.measures, and every run and report takes it.
func ExampleRegister() {
	measure.Register(steps{})
	fmt.Println(slices.Contains(measure.Names(), "example_steps"))
	// Output: true
}
