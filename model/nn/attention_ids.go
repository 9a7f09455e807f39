package nn

import "github.com/pkg/errors"

// Attention at drawn positions (AttentionConfig.PositionIDs): training may place the tokens of a
// window at positions other than 0..n−1, the same ones in every sequence of a batch, as
// randomized positions and PoSE do. The position tables and the bias then cover
// PositionRange positions, and the op looks them up at the ids: token t is rotated by the
// tables' row PositionIDs[t], queries and keys alike; query i gets the bias by distance
// [h][PositionIDs[i] − PositionIDs[j]] for key j, or the bias per query
// [h][PositionIDs[i]][PositionIDs[j]]; and a learned bias's gradient goes to the entry it was
// read from. Everything else counts tokens, not positions: the query scale of query i is still
// [h][i] (a temperature grows with the keys a query attends to, i+1 of them), a window still
// keeps the latest keys, and the statistics' far keys are tokens back. The ids increase
// strictly, so a key's distance is positive and each pair of positions comes from one pair of
// tokens. Without ids, none of this runs: the op computes what it computed before.

// positions is the number of positions the tables and the bias cover: the range of the ids when
// there are ids, the sequence length otherwise.
func (c AttentionConfig) positions() int {
	if c.PositionIDs != nil {
		return c.PositionRange
	}
	return c.SeqLen
}

// checkIDs checks the ids' settings against the rest of the config, once, when the op is built.
func (c AttentionConfig) checkIDs() error {
	ids := c.PositionIDs
	switch {
	case ids == nil:
		return nil
	case len(ids) != c.SeqLen:
		return errors.Errorf("Attention: %d position ids for sequences of %d", len(ids), c.SeqLen)
	case c.PositionRange < c.SeqLen:
		return errors.Errorf("Attention: position ids below %d for sequences of %d", c.PositionRange, c.SeqLen)
	case c.Remap != nil || c.Bias == ByRow:
		return errors.New("Attention: position ids with a remap or a bias by row, which know positions 0..n−1 only")
	}
	return nil
}

// checkIDValues checks the ids as a pass finds them: increasing strictly, and below the range.
func (c AttentionConfig) checkIDValues() error {
	ids := c.PositionIDs
	if ids == nil {
		return nil
	}
	for i, p := range ids {
		if p < 0 || p >= c.PositionRange || i > 0 && p <= ids[i-1] {
			return errors.Errorf("Attention: position id %d of token %d, want ids increasing strictly from 0 up to %d", p, i, c.PositionRange-1)
		}
	}
	return nil
}

// adjustAt adds to row, the scores of the query at position pi for the keys at positions pk, its
// bias in head h.
func (k *attention[F]) adjustAt(row, bias []F, h, pi int, pk []int) {
	r := k.cfg.PositionRange
	if k.cfg.Bias == ByDistance {
		bh := bias[h*r : (h+1)*r]
		for j, p := range pk {
			row[j] += bh[pi-p]
		}
		return
	}
	bq := bias[(h*r+pi)*r : (h*r+pi+1)*r]
	for j, p := range pk {
		row[j] += bq[p]
	}
}

// biasGradAt writes head h's part of the bias's gradient db from acc, its sum over the sequences
// for each query and key: each (query, key) pair's to the entry its positions read. By distance,
// the pairs at one distance are summed in float64 in the order of their queries, as biasGrad
// sums them without ids, so that ids 0..n−1 give its sums to the bit.
func (k *attention[F]) biasGradAt(db []F, acc []float64, h int) {
	c := k.cfg
	t, r, ids := c.SeqLen, c.PositionRange, c.PositionIDs
	if c.Bias == PerQuery {
		dh := db[h*r*r : (h+1)*r*r]
		clear(dh)
		for i := 0; i < t; i++ {
			row := dh[ids[i]*r:]
			for j := 0; j <= i; j++ {
				row[ids[j]] = F(acc[i*t+j])
			}
		}
		return
	}
	sum := k.distAcc[h]
	clear(sum)
	for i := 0; i < t; i++ {
		for j := 0; j <= i; j++ {
			sum[ids[i]-ids[j]] += acc[i*t+j]
		}
	}
	for δ, v := range sum {
		db[h*r+δ] = F(v)
	}
}
