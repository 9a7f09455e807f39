package measure

import (
	"fmt"
	"slices"
	"sync"

	"extrapolate/experiments/config"
)

// measures is the registry of measures: the built-in ones in their list's order, then the
// others in the order they registered. It is the order of their sections in a report, of their
// lines in a summary and of their fields in a results file.
var measures struct {
	mu   sync.RWMutex
	list []Measure
	// builtin counts the built-in measures, which lead list.
	builtin int
}

// Register makes a measure available by its name, to eval.measures and every run and
// report, after the built-in measures and those registered before it. It panics if the name is
// taken or one of its files is another's, as database/sql.Register does, since that is a
// programming error.
func Register(m Measure) { register("Register", m, false) }

// RegisterBuiltin registers the built-in measures, in the order a report shows them, after
// those registered so far by it and ahead of every other: package builtin calls it from its
// init, with its list. Go initializes packages that do not import one another in the order of
// their import paths, so a measure of another package (examples/accuracy) may register before
// the list does; it still comes after the built-in ones. It panics as Register does.
func RegisterBuiltin(ms ...Measure) {
	for _, m := range ms {
		register("RegisterBuiltin", m, true)
	}
}

// register adds m to the registry: at the end, or, built in, after the other built-in ones.
func register(caller string, m Measure, builtin bool) {
	measures.mu.Lock()
	defer measures.mu.Unlock()
	if err := checkNewMeasure(m); err != nil {
		panic("measure: " + caller + ": " + err.Error())
	}
	at := len(measures.list)
	if builtin {
		at = measures.builtin
		measures.builtin++
	}
	measures.list = slices.Insert(measures.list, at, m)
	// The config checks eval.measures against the names registered with it.
	config.RegisterMeasure(m.Name())
}

// checkNewMeasure refuses a measure whose name or files clash with a registered one's or with
// a run's own files.
func checkNewMeasure(m Measure) error {
	if err := config.CheckName("measure", m.Name()); err != nil {
		return err
	}
	if ownFields()[m.Name()] {
		return fmt.Errorf("measure %s: the name of a field of the results file", m.Name())
	}
	taken := map[string]string{}
	for _, f := range RunOwnFiles {
		taken[f] = "the run"
	}
	for _, o := range measures.list {
		if o.Name() == m.Name() {
			return fmt.Errorf("measure %s registered twice", m.Name())
		}
		for _, f := range o.Files() {
			taken[f] = "measure " + o.Name()
		}
	}
	for _, f := range m.Files() {
		if by, ok := taken[f]; ok {
			return fmt.Errorf("measure %s: file %s is %s's", m.Name(), f, by)
		}
	}
	return nil
}

// All lists the registered measures, in the order they registered.
func All() []Measure {
	measures.mu.RLock()
	defer measures.mu.RUnlock()
	return slices.Clone(measures.list)
}

// Names lists the registered measures' names, in the order they registered.
func Names() []string {
	var names []string
	for _, m := range All() {
		names = append(names, m.Name())
	}
	return names
}

// measuresOf lists, in the registry's order, the measures a config asks for: those its
// eval.measures name, and those that select it themselves.
func measuresOf(c config.Config) []Measure {
	var out []Measure
	for _, m := range All() {
		if Selects(m, c) {
			out = append(out, m)
		}
	}
	return out
}
