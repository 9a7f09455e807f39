package experiments

import (
	"extrapolate/experiments/measure"
	"extrapolate/experiments/plot"
)

// The measures, the results file and a comparison's aggregate live in package measure, below
// this one, which imports nothing of it; these are its names here, so that cmd/ imports
// experiments alone.

// Result is what a run found: its results file.
type Result = measure.Result

// LengthResult is the score at one evaluation length.
type LengthResult = measure.LengthResult

// RunResult is one finished (or failed) run of a comparison.
type RunResult = measure.RunResult

// Series is one run of a comparison, aggregated over its seeds.
type Series = measure.Series

// Stat is the mean and sample standard deviation over seeds at one length.
type Stat = measure.Stat

// Line is one series' line in a comparison's figure.
type Line = plot.Line

// Files of a run folder: its own (the perplexity measure's are measure.ResultsCSV, ...).
const (
	ConfigFile     = measure.ConfigFile
	LogFile        = measure.LogFile
	ResultsJSON    = measure.ResultsJSON
	CheckpointFile = measure.CheckpointFile
)

// ErrInterrupted says a run stopped on request after saving a checkpoint (measure.ErrInterrupted).
var ErrInterrupted = measure.ErrInterrupted

// Summary is a short text of a run's results for the terminal (measure.Summary).
func Summary(r *Result) string { return measure.Summary(r) }

// WriteFile writes a results file whole or not at all (measure.WriteFile).
func WriteFile(path string, b []byte) error { return measure.WriteFile(path, b) }
