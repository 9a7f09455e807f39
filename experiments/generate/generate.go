// Package generate is a trained model's generation: a text continued byte by byte (Continue),
// each drawn from the model's scores of the byte that follows the text so far (NextLogits) by
// the caller's rule (cmd/sample's temperature, top-k and seeded draws).
package generate

import (
	"context"
	"fmt"

	"extrapolate/internal/exit"
	"extrapolate/model"
	"extrapolate/position"
)

// Continue continues prompt by n bytes, each the byte draw picks from the logits of the model
// m with scheme s after the text so far, and returns the prompt followed by them. It stops before
// the next byte once ctx is done, with an error wrapping exit.ErrInterrupted.
func Continue(ctx context.Context, m *model.Model, s position.Scheme, prompt []byte, n int, draw func(logits []float64) int) ([]byte, error) {
	ids := make([]int, len(prompt), len(prompt)+n)
	for i, b := range prompt {
		ids[i] = int(b)
	}
	text := append([]byte(nil), prompt...)
	for range n {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%w after %d of %d bytes", exit.ErrInterrupted, len(text)-len(prompt), n)
		}
		logits, err := NextLogits(m, s, ids)
		if err != nil {
			return nil, fmt.Errorf("generating byte %d: %w", len(text)-len(prompt)+1, err)
		}
		next := draw(logits)
		ids, text = append(ids, next), append(text, byte(next))
	}
	return text, nil
}

// NextLogits runs the trained model m over ids, one sequence, with scheme s, and returns the
// logits of its last position: the model's scores for the byte that follows ids. It builds the
// graph for len(ids) positions each time, so a caller that grows ids by a byte a step runs the
// whole window again; at the sizes this program trains, that is simpler than a cache of keys
// and values and fast enough. A scheme that cannot take len(ids) positions gives an error for
// which model.IsNotApplicable is true.
func NextLogits(m *model.Model, s position.Scheme, ids []int) ([]float64, error) {
	g, err := m.Graph(s, 1, len(ids), model.Options{})
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
