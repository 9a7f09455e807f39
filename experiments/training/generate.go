package training

import (
	"fmt"

	"extrapolate/model"
	"extrapolate/position"
)

// NextLogits runs the trained model over ids, one sequence, with scheme s, and returns the
// logits of its last position: the model's scores for the byte that follows ids. It builds the
// graph for len(ids) positions each time, so a caller that grows ids by a byte a step runs the
// whole window again; at the sizes this program trains, that is simpler than a cache of keys
// and values and fast enough. A scheme that cannot take len(ids) positions gives an error for
// which model.IsNotApplicable is true.
func (t *Trained) NextLogits(s position.Scheme, ids []int) ([]float64, error) {
	g, err := t.Model.Graph(s, 1, len(ids), model.Options{})
	if err != nil {
		return nil, fmt.Errorf("%d positions: %w", len(ids), err)
	}
	defer g.Close()
	copy(g.IDs, ids) // the targets stay 0: only the logits are read
	if _, err := g.Run(); err != nil {
		return nil, err
	}
	logits := g.Logits()
	v, last := logits.Shape()[1], len(ids)-1
	switch x := logits.Data().(type) {
	case []float32:
		return widen(x[last*v : (last+1)*v]), nil
	case []float64:
		return widen(x[last*v : (last+1)*v]), nil
	}
	return nil, fmt.Errorf("logits of type %v", logits.Dtype())
}

// widen copies a row of logits into float64s, which outlive the graph they came from.
func widen[F float32 | float64](row []F) []float64 {
	out := make([]float64, len(row))
	for i, x := range row {
		out[i] = float64(x)
	}
	return out
}
