package experiments

import "extrapolate/experiments/measure"

// The measures' API, the results file and a comparison's aggregate live in package measure,
// below this one, which imports nothing of it; these are its names here, so that cmd/ imports
// experiments alone.

// CheckpointFile is a run folder's checkpoint.
const CheckpointFile = measure.CheckpointFile

// ErrInterrupted says a run stopped on request after saving a checkpoint (measure.ErrInterrupted).
var ErrInterrupted = measure.ErrInterrupted

// Summary is a short text of a run's results for the terminal (measure.Summary).
func Summary(r *measure.Result) string { return measure.Summary(r) }
