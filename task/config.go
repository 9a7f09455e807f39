package task

import "fmt"

// Config is a run's task section: which tasks it trains on and is scored on. Unset, a run
// trains on its corpus as before tasks existed.
type Config struct {
	// Names are the tasks, registered names, trained on in equal shares and each scored at its
	// test sizes.
	Names []string `yaml:"names"`
	// Examples is how many held-out examples are scored at each test size; DefaultExamples
	// when unset.
	Examples int `yaml:"examples,omitempty"`
}

// DefaultExamples is the examples scored at a size when task.examples is unset: enough that a
// 95% interval on an exact match near 50% is about ±10 points wide for one seed, and the
// whole evaluation of every built-in task at its test sizes takes seconds.
const DefaultExamples = 100

// maxExamples bounds task.examples, far above what separates schemes.
const maxExamples = 100000

// Resolve checks the section and returns its tasks, in the order named, and the examples
// scored at a size.
func (c Config) Resolve() ([]Task, int, error) {
	if len(c.Names) == 0 {
		return nil, 0, fmt.Errorf("task.names: no task (known: %v)", Names())
	}
	var tasks []Task
	seen := map[string]bool{}
	for _, n := range c.Names {
		if seen[n] {
			return nil, 0, fmt.Errorf("task.names: %s given twice", n)
		}
		seen[n] = true
		t, err := Lookup(n)
		if err != nil {
			return nil, 0, fmt.Errorf("task.names: %w", err)
		}
		tasks = append(tasks, t)
	}
	ex := c.Examples
	if ex == 0 {
		ex = DefaultExamples
	}
	if ex < 0 || ex > maxExamples {
		return nil, 0, fmt.Errorf("task.examples: %d, want between 1 and %d", c.Examples, maxExamples)
	}
	return tasks, ex, nil
}
