// Package task is length generalisation on tasks: problems whose answer is right or wrong,
// generated at a size (digits, items, keys, steps), trained on a range of sizes and scored at
// sizes never trained. A task is one file that registers itself by name (Register), from any
// package, as a position scheme does; the built-in ones follow the papers that made them, each
// citing its source.
//
// A task writes an example as bytes, the byte-level model's tokens: the text it reads, and which
// of its tokens are the answer. Training puts the loss on the answer's tokens only; evaluation
// scores an example right when the model's most likely token at every answer position is the
// answer's (exact match under teacher forcing).
package task

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"extrapolate/internal/pluginhint"
	"extrapolate/internal/rng"
)

// A Task generates examples of a size.
type Task interface {
	// Name is the name configs and the registry know it by.
	Name() string
	// Sizes are the sizes it trains on and those it is scored at by default.
	Sizes() Sizes
	// MaxLen bounds the length, in bytes, of an example of the size: the window it needs.
	MaxLen(size int) int
	// Generate draws one example of the size from g. Sizes outside those MaxLen and Sizes
	// describe are the caller's mistake; Generate may panic on them.
	Generate(g *rng.SplitMix64, size int) Example
	// Source names the paper (and code) whose task and format it follows.
	Source() string
}

// Sizes are a task's training range and test sizes.
type Sizes struct {
	// Min and Max bound the training sizes, which training draws uniformly.
	Min, Max int
	// Test are the sizes scored, increasing; they may start inside the training range and
	// reach several times its top.
	Test []int
}

// An Example is one instance of a task: the text the model reads and, for each of its bytes,
// whether it is part of the answer. An answer byte at i is predicted from Text[:i], so the first
// byte is never one.
type Example struct {
	Text   []byte
	Answer []bool
	// Hide makes every answer byte a target only: the window reads Blank in its place, so that
	// no answer is seen by the predictions after it. Zoology's MQAR asks its queries so, each
	// value a label and never an input.
	Hide bool
}

// QA is the example of a prompt followed by its answer.
func QA(prompt, answer []byte) Example {
	text := append(slices.Clip(prompt), answer...)
	mask := make([]bool, len(text))
	for i := len(prompt); i < len(text); i++ {
		mask[i] = true
	}
	return Example{Text: text, Answer: mask}
}

// AnswerBytes is the example's answer, its answer bytes in order.
func (e Example) AnswerBytes() []byte {
	var out []byte
	for i, a := range e.Answer {
		if a {
			out = append(out, e.Text[i])
		}
	}
	return out
}

// check reports what is wrong with an example a task wrote for a size.
func (e Example) check(t Task, size int) error {
	switch {
	case len(e.Answer) != len(e.Text):
		return fmt.Errorf("task %s: an example of size %d has %d bytes and %d answer marks", t.Name(), size, len(e.Text), len(e.Answer))
	case len(e.Text) > t.MaxLen(size):
		return fmt.Errorf("task %s: an example of size %d has %d bytes, above its MaxLen %d", t.Name(), size, len(e.Text), t.MaxLen(size))
	case len(e.Answer) > 0 && e.Answer[0]:
		return fmt.Errorf("task %s: an example of size %d starts with an answer byte, which nothing predicts", t.Name(), size)
	case !slices.Contains(e.Answer, true):
		return fmt.Errorf("task %s: an example of size %d has no answer", t.Name(), size)
	}
	return nil
}

// registry holds the tasks by name.
var registry struct {
	mu    sync.RWMutex
	tasks map[string]Task
}

// Register makes a task available by its name. It panics if the name is taken or the task's
// sizes make no sense, as database/sql.Register does, since that is a programming error.
func Register(t Task) {
	registry.mu.Lock()
	defer registry.mu.Unlock()
	if registry.tasks == nil {
		registry.tasks = map[string]Task{}
	}
	if _, ok := registry.tasks[t.Name()]; ok {
		panic("task: Register: " + t.Name() + " registered twice")
	}
	if err := checkSizes(t); err != nil {
		panic("task: Register: " + err.Error())
	}
	registry.tasks[t.Name()] = t
}

// checkSizes refuses a task whose training range or test sizes are empty or out of order.
func checkSizes(t Task) error {
	s := t.Sizes()
	if s.Min <= 0 || s.Max < s.Min || len(s.Test) == 0 || !slices.IsSorted(s.Test) || s.Test[0] <= 0 {
		return fmt.Errorf("task %s: sizes %+v, want 0 < min <= max and increasing positive test sizes", t.Name(), s)
	}
	return nil
}

// Lookup finds a registered task.
func Lookup(name string) (Task, error) {
	registry.mu.RLock()
	defer registry.mu.RUnlock()
	if t, ok := registry.tasks[name]; ok {
		return t, nil
	}
	return nil, fmt.Errorf("unknown task %q (known: %s); %s", name, strings.Join(namesLocked(), ", "), pluginhint.For("task"))
}

// Names lists the registered tasks, sorted.
func Names() []string {
	registry.mu.RLock()
	defer registry.mu.RUnlock()
	return namesLocked()
}

func namesLocked() []string {
	var names []string
	for n := range registry.tasks {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
