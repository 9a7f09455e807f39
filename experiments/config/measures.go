package config

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"extrapolate/internal/pluginhint"
)

// measureNames are the names eval.measures may give. The measure registry
// (experiments/measure), above this package, adds each measure's name as it registers it, as
// image/png registers its format with package image; a config is checked against them in its
// own checks, so that its first error stays its first.
var measureNames struct {
	mu    sync.RWMutex
	names []string
}

// RegisterMeasure makes name valid in eval.measures. experiments/measure calls it for every
// measure it registers; nothing else should.
func RegisterMeasure(name string) {
	measureNames.mu.Lock()
	defer measureNames.mu.Unlock()
	if !slices.Contains(measureNames.names, name) {
		measureNames.names = append(measureNames.names, name)
	}
}

// checkMeasures refuses a name no measure registered, and a name given twice.
func checkMeasures(names []string) error {
	measureNames.mu.RLock()
	known := slices.Clone(measureNames.names)
	measureNames.mu.RUnlock()
	seen := map[string]bool{}
	for _, name := range names {
		if !slices.Contains(known, name) {
			return fmt.Errorf("eval.measures: unknown measure %q (known: %s); %s", name, strings.Join(known, ", "), pluginhint.For("measure"))
		}
		if seen[name] {
			return fmt.Errorf("eval.measures: %s given twice", name)
		}
		seen[name] = true
	}
	return nil
}
