package position

import (
	"sort"
	"sync"
)

// registry holds values by name, safe for concurrent use: the schemes and the scaling types.
type registry[T any] struct {
	kind string // for the panic message
	mu   sync.RWMutex
	m    map[string]T
}

// add registers v under name. It panics if the name is taken, as database/sql.Register does,
// since that is a programming error.
func (r *registry[T]) add(name string, v T) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.m[name]; dup {
		panic("position: " + r.kind + " " + name + " registered twice")
	}
	if r.m == nil {
		r.m = map[string]T{}
	}
	r.m[name] = v
}

func (r *registry[T]) lookup(name string) (T, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	v, ok := r.m[name]
	return v, ok
}

// names lists the registered names, sorted.
func (r *registry[T]) names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	names := make([]string, 0, len(r.m))
	for n := range r.m {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
