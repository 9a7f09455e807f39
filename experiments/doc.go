// Package experiments is the train-short, test-long protocol as code: a run trains a model with
// one position scheme at a short length and scores the same validation tokens at longer ones; a
// comparison does that for several schemes and seeds and checks published claims. It holds no
// code: the commands and the examples import the packages under it, which import each other in
// one direction only:
//
//   - config and plot, at the bottom, importing no other package of experiments;
//   - measure, what is measured of a run and how a comparison reports it, and the built-in
//     measures under it (perplexity, positions, passkey, attention, sinks, tasks,
//     schemeweights), registered in report order by measure/builtin;
//   - claims, the published claims judged on a comparison's aggregate;
//   - training, a run: its training, its checkpoints and its results folder;
//   - evaluate (one checkpoint under every RoPE scaling and distance map) and export (a model
//     for other tools, and back into a checkpoint), above training, and generate (text from a
//     model), which imports none of these;
//   - compare, a comparison, its runner and its report, above training and claims.
package experiments
