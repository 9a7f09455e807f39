// Package compare runs a comparison: several runs, each over several seeds, trained at the same
// length and scored on the same validation tokens. Its config (Config) is resolved once into a
// Plan that the Runner and its shards share; the runner drives a training.Run per planned run,
// lets runs with the same training share one, and, once every run has results, writes the
// report: the measures' aggregate, the claims' verdicts, REPORT.md and its JSON, or, for a grid,
// each claim at every point of the grid. One writer at a time holds a comparison's folder
// (Runner.Lock), the shards of one comparison together; a part (Plan.Only) writes no folder
// that holds runs it leaves out.
//
// It is the top of the pipeline below experiments: it imports config, measure, claims, plot and
// training, and none of them imports it.
package compare
