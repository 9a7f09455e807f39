// Package training is one run of the train-short, test-long protocol: it trains a model with one
// position scheme at a short length (Run), checkpoints it so that an interrupted run resumes to
// the same bits, then has the registered measures score it at longer lengths and writes its
// results folder. It also loads a checkpoint back (LoadCheckpoint) and scores one checkpoint
// under every RoPE scaling (EvaluateScalings).
//
// It knows nothing of comparisons: a comparison's runner drives a Run per planned run, and asks
// Key which runs train the same weights, so that they share one training.
package training
