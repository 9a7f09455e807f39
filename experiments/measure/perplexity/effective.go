package perplexity

import (
	"fmt"
	"io"
	"slices"

	"extrapolate/experiments/measure"
)

// EffectiveTolerance is how far above its perplexity at the training length a run may go and
// still count as holding: 10%. RULER quotes one number per model, its effective length (the
// longest length whose score stays above a threshold); for perplexity the threshold is the
// run's own 1x, so that schemes of different levels compare by how far they hold.
const EffectiveTolerance = 0.1

// Effective is a run's effective length: the longest evaluated length n such that at every
// evaluated length from the training length to n its perplexity is at most (1 +
// EffectiveTolerance) × its perplexity at the training length. It is the training length when
// the next length already breaks the bound, and 0 when the run has no score at the training
// length (or failed).
func Effective(res *measure.Result, trainLen int) int {
	if !res.OK() {
		return 0
	}
	one, ok := res.At(trainLen)
	if !ok || !one.Applicable || one.Perplexity == nil {
		return 0
	}
	limit := (1 + EffectiveTolerance) * *one.Perplexity
	lengths := slices.Clone(res.Lengths)
	slices.SortFunc(lengths, func(a, b measure.LengthResult) int { return a.Length - b.Length })
	eff := trainLen
	for _, l := range lengths {
		if l.Length <= trainLen {
			continue
		}
		if !l.Applicable || l.Perplexity == nil || *l.Perplexity > limit {
			break
		}
		eff = l.Length
	}
	return eff
}

// effectiveTable writes each series' effective length, as a multiple of the training length,
// its range over seeds and each seed's.
func effectiveTable(w io.Writer, rep *measure.Report) {
	fmt.Fprintf(w, "## Effective length\n\nThe longest evaluated length up to which a run's perplexity stays within %g%% of its own at the training length (`perplexity.Effective`; RULER's effective length, with each run's 1x as its threshold), as a multiple of the training length: the range over seeds, then each seed's.\n\n| run | effective length | by seed |\n|---|---|---|\n", 100*EffectiveTolerance)
	for _, s := range rep.Series {
		var lengths []int
		for _, r := range rep.Runs {
			if r.Label == s.Label {
				lengths = append(lengths, Effective(r.Result, rep.TrainLen))
			}
		}
		span, each := measure.LengthSpread(lengths, rep.TrainLen)
		fmt.Fprintf(w, "| %s | %s | %s |\n", s.Label, span, each)
	}
	fmt.Fprintf(w, "\n")
}
