package config

// Position ids in training (train.positions): the main phase's batches are seen at positions
// drawn anew for each step, the same for every sequence of a batch, from a range longer than
// the training length (position/ids.go draws them; model.Options.PositionRange takes them).
// Evaluation, and the phases after the main one, see 0..n−1.

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
	return ids, nil
}
