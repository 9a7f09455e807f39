// Package training is one run of the train-short, test-long protocol: it trains a model with one
// position scheme at a short length (Run), checkpoints it so that an interrupted run resumes to
// the same bits, then has the registered measures score it at longer lengths and writes its
// results folder. It also loads a checkpoint back (LoadCheckpoint), draws a config's model
// before its first step (Untrained) and gives weights trained elsewhere to a config's model as
// a finished checkpoint (Adopt).
//
// It knows nothing of comparisons: a comparison's runner drives a Run per planned run, and asks
// Key which runs train the same weights, so that they share one training. Nor of what is done
// with a checkpoint afterwards: packages evaluate (one checkpoint under every scaling), export
// (its model for other tools, and back) and generate (text from it) sit above it.
package training
