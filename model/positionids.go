package model

import (
	"fmt"

	"extrapolate/position"
)

// Position ids (Options.PositionRange): randomized positions and PoSE train a model with its
// tokens at positions other than 0..n−1, drawn anew for each batch, the same for every sequence
// of it (position.IDs draws them), and randomized positions evaluate it at ids drawn for each
// window. A graph built for them makes everything its scheme adds over the whole range once,
// and the ops look it up at the ids each run: the embedding adds the table's row of each
// token's id (nn.EmbedAt), and attention rotates each query and key by its id's row and adds
// the bias of the ids' distance, or of their pair for a bias per query
// (nn.AttentionConfig.PositionIDs); a learned table's or bias's gradient goes to the rows and
// entries read. A training graph's ids are shared by its sequences (a bias's gradient is summed
// by their positions); an evaluation graph's are each sequence's own, Batch·Len of them. A
// scheme that cannot take the range (a learned table shorter than it) says so as for a length,
// and the config refuses it before training. A temperature counts the keys a query attends to,
// not its position, and is unchanged; so are a sliding window, which keeps a query's latest
// keys, and everything in a graph built without ids, which runs the code it ran before ids
// existed. A distance map places tokens at 0..n−1 and is not applicable at ids.

// takePositions sets up the graph's position ids, 0..Len−1 in every sequence to start with,
// when o asks for them.
func (gr *Graph) takePositions(o Options) error {
	r := o.PositionRange
	switch {
	case r == 0:
		return nil
	case r < gr.Len:
		return fmt.Errorf("model: position ids below %d for sequences of %d", r, gr.Len)
	case o.StockOps:
		return fmt.Errorf("model: position ids are taken by the fused ops, not the stock ops")
	}
	size := gr.Len
	if !o.Train {
		size = gr.Batch * gr.Len
	}
	gr.Positions = make([]int, size)
	for i := range gr.Positions {
		gr.Positions[i] = i % gr.Len
	}
	return nil
}

// errMapAtIDs is the error of a distance map in a graph at position ids: its spans and
// alternate positions are of tokens 0..n−1, so the length is not applicable.
func errMapAtIDs(dm position.DistanceMap) error {
	return fmt.Errorf("model: the %s distance map places tokens at 0..n−1, not at drawn position ids: %w", dm.Name(), position.ErrNotApplicable)
}
