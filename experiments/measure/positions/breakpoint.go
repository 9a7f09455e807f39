package positions

import "math"

// Where a scheme breaks, read off its loss by position: the same rule for every scheme, so that
// a prediction (RoPE's T_extra, position.CriticalOf) can be set beside a measurement.
const (
	// BreakMargin is how far above its in-window level the loss must rise to count as broken:
	// 5%, the tolerance within which alibi_flat calls a curve flat.
	BreakMargin = 0.05
	// binsPerOctave: past the training length the loss is averaged over eighth-octave bins of
	// positions, fine enough to place a break within 9%, coarse enough that a bin at 16x holds
	// hundreds of tokens.
	binsPerOctave = 8
)

// Breakpoint is the first position at or past the training length trainLen where the loss
// rises above its in-window level by BreakMargin and stays there: the in-window level is the
// token-weighted mean loss of positions trainLen/2 to trainLen−1, where the loss has settled;
// past trainLen the buckets are gathered into eighth-octave bins of positions, [L·2^(k/8),
// L·2^((k+1)/8)), each bucket in its first position's bin; the breakpoint is the first position
// of the first bin whose loss is above level·(1 + BreakMargin) when the next bin's is too (or
// when it is the last), so that one noisy bin does not decide. ok is false when the loss never
// rises so (or the curve does not reach past trainLen).
func Breakpoint(ps []Bucket, trainLen int) (pos int, level float64, ok bool) {
	var sum float64
	tokens := 0
	for _, p := range ps {
		if p.From >= trainLen/2 && p.To < trainLen {
			sum += p.Loss * float64(p.Tokens)
			tokens += p.Tokens
		}
	}
	if tokens == 0 {
		return 0, 0, false
	}
	level = sum / float64(tokens)
	bins := eighthOctaves(ps, trainLen)
	limit := level * (1 + BreakMargin)
	for k, b := range bins {
		if b.Loss > limit && (k == len(bins)-1 || bins[k+1].Loss > limit) {
			return b.From, level, true
		}
	}
	return 0, level, false
}

// eighthOctaves gathers the buckets at or past trainLen into eighth-octave bins of positions.
func eighthOctaves(ps []Bucket, trainLen int) []Bucket {
	return binBy(ps, func(p Bucket) (int, bool) {
		if p.From < trainLen || p.Tokens == 0 {
			return 0, false
		}
		return int(math.Floor(binsPerOctave * math.Log2(float64(p.From)/float64(trainLen)))), true
	})
}
