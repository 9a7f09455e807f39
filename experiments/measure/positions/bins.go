package positions

import (
	"fmt"
	"math/bits"

	"extrapolate/experiments/measure"
)

// logBins groups a window's loss by position into octave bins of positions, {0}, [1,2), [2,4),
// [4,8), ...: on a log axis every bin is as wide, and the exact positions a run records up to
// twice its training length, a thousand noisy points per curve at 16x, average into a dozen.
// A bin's loss is the token-weighted mean of its buckets'; a bucket belongs to the bin of its
// first position (a run's wider buckets start on the octaves when the training length is a power
// of two), and the bin spans its buckets' positions. Only a comparison's figure is binned.
func logBins(ps []Bucket) []Bucket {
	return binBy(ps, func(p Bucket) (int, bool) { return bits.Len(uint(p.From)), true })
}

// binBy gathers the buckets bin keeps into bins of consecutive buckets with the same key (keys
// are non-negative): each bin spans its buckets' positions and tokens, and its loss is their
// token-weighted mean.
func binBy(ps []Bucket, bin func(Bucket) (key int, keep bool)) []Bucket {
	var out []Bucket
	var sums []float64
	last := -1 // the key of out's last bin
	for _, p := range ps {
		o, keep := bin(p)
		if !keep {
			continue
		}
		if o != last {
			out, sums, last = append(out, Bucket{From: p.From}), append(sums, 0), o
		}
		k := len(out) - 1
		out[k].To = p.To
		out[k].Tokens += p.Tokens
		sums[k] += p.Loss * float64(p.Tokens)
	}
	for k := range out {
		if out[k].Tokens > 0 {
			out[k].Loss = sums[k] / float64(out[k].Tokens)
		}
	}
	return out
}

// binnedCurve is a series' loss by position at one length in octave bins: each seed's bin loss,
// then their mean (Bins' Loss, with Tokens summed over seeds) and standard deviation.
type binnedCurve struct {
	Length int
	Bins   []Bucket
	Std    []float64
}

// binnedOf gives, by series of rep.Series, its loss by position in octave bins at the
// longest length it was scored at; a series without loss by position has no bins.
func binnedOf(rep *measure.Report, byLabel byLength) ([]binnedCurve, error) {
	out := make([]binnedCurve, len(rep.Series))
	for i, s := range rep.Series {
		byLen := byLabel[s.Label]
		for _, n := range rep.Lengths {
			if len(byLen[n]) > 0 {
				out[i].Length = n
			}
		}
		if out[i].Length == 0 {
			continue
		}
		var err error
		if out[i].Bins, out[i].Std, err = binSeeds(byLen[out[i].Length]); err != nil {
			return nil, fmt.Errorf("%s at length %d: %w", s.Label, out[i].Length, err)
		}
	}
	return out, nil
}

// binSeeds bins each seed's buckets and averages the bins over seeds.
func binSeeds(seeds [][]Bucket) ([]Bucket, []float64, error) {
	var binned [][]Bucket
	for _, ps := range seeds {
		binned = append(binned, logBins(ps))
	}
	return averageSeeds(binned)
}
