// Package measure is what is measured of a trained model and how a comparison reports it, as
// the measures see it: the Measure interface and its optional interfaces, the registry
// (Register), the shared pass over the protocol's evaluation windows that drives them
// (Evaluation), a run's results file (Result) with the checks a report makes of a run's files,
// and a comparison's runs aggregated over seeds (Report), with the figure layout every section
// draws in.
//
// The measures themselves are plug-ins written against this API alone, as image/png is for
// image: the built-in ones in the packages below it (perplexity, positions, passkey, attention,
// tasks), registered in their report order by package builtin, and any other from its own
// package (examples/accuracy). The protocol's score, the perplexity by length, is the results
// file's own (Result.Lengths) and the aggregate's (Report.Series), since every claim reads it.
//
// It sits above experiments/config and experiments/plot and below the packages of experiments
// that train runs, judge claims and write reports, which it never imports: the one thing it
// needs from above, which series is plain RoPE, the comparison gives it as a value
// (Report.PlainRoPE), from the claims.
package measure
