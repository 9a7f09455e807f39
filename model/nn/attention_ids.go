package nn

import "github.com/pkg/errors"

// Attention at drawn positions (AttentionConfig.PositionIDs): training may place the tokens of a
// window at positions other than 0..n−1, the same ones in every sequence of a batch, as
// randomized positions and PoSE do, and evaluation of such a model may draw them for each
// window, sequence b's at [b·SeqLen:]. The position tables and the bias then cover
// PositionRange positions, and the op looks them up at the ids: token t is rotated by the
// tables' row PositionIDs[t], queries and keys alike; query i gets the bias by distance
// [h][PositionIDs[i] − PositionIDs[j]] for key j, or the bias per query
// [h][PositionIDs[i]][PositionIDs[j]] (given whole, or a query at a time by BiasRow); and a
// learned bias's gradient goes to the entry it was read from. Everything else counts tokens,
// not positions: the query scale of query i is still [h][i] (a temperature grows with the keys
// a query attends to, i+1 of them), a window still keeps the latest keys, and the statistics'
// far keys are tokens back. The ids increase strictly, so a key's distance is positive and each
// pair of positions comes from one pair of tokens. Without ids, none of this runs: the op
// computes what it computed before.

// positions is the number of positions the tables and the bias cover: the range of the ids when
// there are ids, the sequence length otherwise.
func (c AttentionConfig) positions() int {
	if c.PositionIDs != nil {
		return c.PositionRange
	}
	return c.SeqLen
}

// checkIDs checks the ids' settings against the rest of the config, once, when the op is built.
// A remap knows positions 0..n−1 only: its spans and alternate positions are of tokens.
func (c AttentionConfig) checkIDs() error {
	ids := c.PositionIDs
	switch {
	case ids == nil:
		return nil
	case len(ids) != c.SeqLen && len(ids) != c.Batch*c.SeqLen:
		return errors.Errorf("Attention: %d position ids for %d sequences of %d", len(ids), c.Batch, c.SeqLen)
	case c.PositionRange < c.SeqLen:
		return errors.Errorf("Attention: position ids below %d for sequences of %d", c.PositionRange, c.SeqLen)
	case c.Remap != nil:
		return errors.New("Attention: position ids with a remap, which knows positions 0..n−1 only")
	}
	return nil
}

// idsOf returns the positions of sequence b's tokens: nil at 0..n−1, the ids every sequence
// shares, or the sequence's own.
func (c AttentionConfig) idsOf(b int) []int {
	if len(c.PositionIDs) > c.SeqLen {
		return c.PositionIDs[b*c.SeqLen : (b+1)*c.SeqLen]
	}
	return c.PositionIDs
}

// checkIDValues checks the ids as a pass finds them: each sequence's increasing strictly, and
// below the range. Ids of each sequence are for evaluation: the backward pass sums the bias's
// gradient by the positions every sequence shares.
func (k *attention[F]) checkIDValues() error {
	c := k.cfg
	ids := c.PositionIDs
	if ids == nil {
		return nil
	}
	if k.train && len(ids) != c.SeqLen {
		return errors.Errorf("Attention: %d position ids, one set for each sequence, in training; want the %d every sequence shares", len(ids), c.SeqLen)
	}
	for i, p := range ids {
		if p < 0 || p >= c.PositionRange || i%c.SeqLen > 0 && p <= ids[i-1] {
			return errors.Errorf("Attention: position id %d of token %d, want ids increasing strictly from 0 up to %d", p, i%c.SeqLen, c.PositionRange-1)
		}
	}
	return nil
}

// adjustAt adds to row, the scores of the query at position pi for the keys at positions pk, its
// bias in head h. A bias given a query at a time is asked key by key, since the keys' positions
// are not contiguous; it costs as many of its values as the positions 0..n−1 would.
func (k *attention[F]) adjustAt(row, bias []F, h, pi int, pk []int, s *attnScratch[F]) {
	r := k.cfg.PositionRange
	switch k.cfg.Bias {
	case ByDistance:
		bh := bias[h*r : (h+1)*r]
		for j, p := range pk {
			row[j] += bh[pi-p]
		}
	case PerQuery:
		bq := bias[(h*r+pi)*r : (h*r+pi+1)*r]
		for j, p := range pk {
			row[j] += bq[p]
		}
	case ByRow:
		one := s.biasRow[:1]
		for j, p := range pk {
			k.cfg.BiasRow(h, pi, p, one)
			row[j] += F(one[0])
		}
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
