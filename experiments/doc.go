// Package experiments is the train-short, test-long protocol as code, as cmd/ and examples/ see
// it: a run trains a model with one position scheme at a short length and scores the same
// validation tokens at longer ones; a comparison does that for several schemes and seeds and
// checks published claims.
//
// It is a facade and holds no logic: it re-exports, under the names cmd/ and examples/ use, the
// packages below it, which import each other in one direction only: config and plot, then
// measure and the built-in measures under it, claims, training (a run), and compare (a
// comparison and its report).
package experiments
