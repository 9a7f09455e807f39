package experiments

import "extrapolate/experiments/compare"

// A comparison, its runner, shards and report live in package compare, below this one, which
// imports nothing of it; these are its names here, so that cmd/ and examples/ import experiments
// alone.

// Runner runs a comparison, resolved once (LoadPlan), into its folder.
type Runner = compare.Runner

// Plan is a comparison's runs, each config resolved once; Only narrows it to some of them.
type Plan = compare.Plan

// Report is a comparison's report: the measures' aggregate and the claims' verdicts.
type Report = compare.Report

// Files of a comparison folder, beside runs/.
const (
	ReportFile = compare.ReportFile
	RunsDir    = compare.RunsDir
)

// IsComparison reports whether the config file at path is a comparison's (compare.IsConfig).
func IsComparison(path string) (bool, error) { return compare.IsConfig(path) }

// LoadPlan reads a comparison config and resolves every run's config once (compare.LoadPlan).
func LoadPlan(path string, sets []string) (*Plan, error) { return compare.LoadPlan(path, sets) }

// ParseShard reads "i/n" (compare.ParseShard).
func ParseShard(s string) (compare.Shard, error) { return compare.ParseShard(s) }
