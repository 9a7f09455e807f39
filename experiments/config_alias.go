package experiments

import (
	"extrapolate/experiments/config"
	"extrapolate/position"
)

// A run's config lives in package config, below this one, which imports nothing of it; these
// are its names here, so that cmd/ and examples/ import experiments alone.

// Config is one run: what to train, how, and at which lengths to evaluate it.
type Config = config.Config

// Eval is the eval section of a config.
type Eval = config.Eval

// PositionCost is what a position scheme returns for a model at n positions.
type PositionCost = config.PositionCost

// Upper bounds of the eval section (config.MaxEvalLength, ...).
const (
	MaxEvalLength      = config.MaxEvalLength
	MaxEvalTokens      = config.MaxEvalTokens
	MaxEvalBatchTokens = config.MaxEvalBatchTokens
)

// Default is the config every file is read on top of (config.Default).
func Default() Config { return config.Default() }

// Resolve turns a config argument into a path (config.Resolve).
func Resolve(arg string) string { return config.Resolve(arg) }

// UnknownConfig says which config a name that names no file may have meant (config.Unknown).
func UnknownConfig(arg string) error { return config.Unknown(arg) }

// LoadResolved reads a run config and resolves it (config.LoadResolved).
func LoadResolved(path string, sets []string) (*config.Resolved, error) {
	return config.LoadResolved(path, sets)
}

// CheckInspect estimates what showing a scheme takes, as cmd/inspect does it
// (config.CheckInspect).
func CheckInspect(spec position.Spec, s position.Scheme, n int, flags string) (PositionCost, error) {
	return config.CheckInspect(spec, s, n, flags)
}
