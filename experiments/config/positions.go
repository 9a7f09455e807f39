package config

// Position ids in training (train.positions): the main phase's batches are seen at positions
// drawn anew for each step, the same for every sequence of a batch, from a range longer than
// the training length (position/ids.go draws them; model.Options.PositionRange takes them).
// The phases after the main one see 0..n−1, and so does evaluation, unless the kind is drawn at
// evaluation too (randomized positions), which then draws each window's ids from the range.

import (
	"fmt"

	"extrapolate/position"
)

// positionIDs resolves train.positions for the training length, nil for none, and asks the
// main phase's scheme about every position the ids can reach, as it is asked about a length:
// a learned table shorter than the range, or xPos's scales past it, are refused now, naming the
// field that sets the range.
func (c Config) positionIDs(train position.Scheme) (*position.IDs, error) {
	ids, err := c.Train.Positions.Resolve(c.Train.SeqLen)
	if err != nil || ids == nil {
		return nil, err
	}
	if err := position.Check(train, ids.Range); err != nil {
		return nil, fmt.Errorf("%s: %d: the %s scheme cannot take positions up to %d: %v", ids.RangeField, ids.Range, c.Position.Scheme, ids.Range-1, err)
	}
	if m := c.EvalPhase().Position.DistanceMap; m != nil && ids.AtEvaluation() {
		// A map's spans and alternate positions are of tokens 0..n−1: every length would be
		// not applicable.
		return nil, fmt.Errorf("position.distance_map: %s places tokens at 0..n−1, but evaluation of train.positions.type %s draws each window's positions", m.Type, ids.Type)
	}
	return ids, nil
}
