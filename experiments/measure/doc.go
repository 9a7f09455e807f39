// Package measure is what is measured of a trained model and how a comparison reports it: the
// Measure interface and its optional interfaces, the registry (Register), the shared pass over
// the protocol's evaluation windows that drives them (Evaluation), the built-in measures
// (perplexity, loss by position, passkey retrieval, attention), a run's results file (Result)
// and a comparison's runs aggregated over seeds (Report), with the figures drawn from it.
//
// It sits above experiments/config and experiments/plot and below package experiments, which
// trains runs, judges claims and writes reports, and which it never imports: the one thing it
// needs from above, which series is plain RoPE, the claims fill in at init (PlainRoPE).
package measure
