package main

import (
	"fmt"

	"extrapolate/experiments/config"
	"extrapolate/position"
)

// positionsLine says where a checkpoint trained at drawn position ids (train.positions) places
// the tokens of a window when evaluated: "" at 0..n−1, the evaluation of every other model. A
// kind drawn at evaluation too (randomized positions) places each window at a draw of its own
// from the range it trained on, as the kind's reference code evaluates, and a distance map,
// whose spans are of positions 0..n−1, cannot be applied there: maps names one given.
// ids are train.positions as the checkpoint's config resolved them.
func positionsLine(c config.Config, ids *position.IDs, maps []*position.DistanceMapConfig) (string, error) {
	if !ids.AtEvaluation() {
		return "", nil
	}
	for _, m := range maps {
		if m != nil {
			return "", fmt.Errorf("-map %s: the checkpoint was trained at drawn positions (train.positions %s) and is evaluated at each window's own draw, but a distance map places tokens at 0..n−1", m.Type, c.Train.Positions)
		}
	}
	return fmt.Sprintf("each window at its own sorted draw of positions from [0, %d), as in training (train.positions %s), seeded by the run's seed and the window; a length past %d is not applicable",
		ids.Range, c.Train.Positions, ids.Range), nil
}
