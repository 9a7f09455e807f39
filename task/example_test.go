package task_test

import (
	"fmt"
	"strings"

	"extrapolate/internal/rng"
	"extrapolate/task"
)

// repeat is a task of one's own: a string of a's to be said again, "aaa=aaa".
type repeat struct{}

func (repeat) Name() string        { return "example_repeat" }
func (repeat) Sizes() task.Sizes   { return task.Sizes{Min: 1, Max: 8, Test: []int{8, 16}} }
func (repeat) MaxLen(size int) int { return 2*size + 1 }
func (repeat) Source() string      { return "this example" }
func (repeat) Generate(_ *rng.SplitMix64, size int) task.Example {
	s := strings.Repeat("a", size)
	return task.QA([]byte(s+"="), []byte(s))
}

// A task registers itself from its package's init function; a config then names it in
// task.names, and training, evaluation and the tasks measure take it as a built-in one.
func ExampleRegister() {
	task.Register(repeat{})
	t, err := task.Lookup("example_repeat")
	if err != nil {
		fmt.Println(err)
		return
	}
	ex := t.Generate(&rng.SplitMix64{}, 3)
	fmt.Printf("%s %v\n", ex.Text, ex.Answer)
	// Output: aaa=aaa [false false false false true true true]
}
