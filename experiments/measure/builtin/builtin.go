// Package builtin registers the built-in measures, in the order a comparison's report shows
// their sections, a run's summary their lines and its results file their fields. Each lives in
// a package of its own under experiments/measure, written against measure's exported API only,
// as image/png is for image, and exports its Measure without registering it: the list below is
// the one place their order is said.
//
// Registering from each package's init could not keep that order: Go initializes packages that
// do not import one another in the order of their import paths, and the order of the imports
// here does not change it. The list registers them with measure.RegisterBuiltin instead, which
// also puts them ahead of a measure registered from another package (examples/accuracy) whose
// init ran first.
//
// Package training imports it, since a run measures with the registered measures, so that every
// command, comparison and test that runs or reports one sees the same measures in the same
// order.
package builtin

import (
	"extrapolate/experiments/measure"
	"extrapolate/experiments/measure/attention"
	"extrapolate/experiments/measure/passkey"
	"extrapolate/experiments/measure/perplexity"
	"extrapolate/experiments/measure/positions"
	"extrapolate/experiments/measure/schemeweights"
	"extrapolate/experiments/measure/sinks"
	"extrapolate/experiments/measure/tasks"
)

func init() {
	measure.RegisterBuiltin(
		perplexity.Measure{},
		positions.Measure{},
		passkey.Measure{},
		attention.Measure{},
		sinks.Measure{},
		tasks.Measure{},
		schemeweights.Measure{},
	)
}
