package passkey

import (
	"fmt"
	"io"
	"slices"

	"extrapolate/experiments/measure"
)

// A run's effective length by retrieval, RULER's effective length put in the passkey's terms:
// its accuracy (mean over depths) must stay at least EffectiveShare of its own at the training
// length and at least EffectiveFloor, "most keys", the share a scaled RoPE must retrieve where
// it claims to (passkey_scaling_extends).
const (
	EffectiveShare = 0.9
	EffectiveFloor = 0.5
)

// Effective is the longest length n such that at every scored length from the training length
// to n the run's accuracy (mean over depths) is at least EffectiveShare × its accuracy at the
// training length and at least EffectiveFloor; 0 when it is below the floor at the training
// length itself, or was not scored there.
func Effective(cells []Cell, trainLen int) int {
	g := gridOf(cells)
	one := -1.0
	for i, n := range g.lengths {
		if n == trainLen {
			one = rowMean(g.acc[i])
		}
	}
	if one < EffectiveFloor {
		return 0
	}
	order := make([]int, len(g.lengths)) // the lengths' indices, shortest first
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return g.lengths[a] - g.lengths[b] })
	eff := trainLen
	for _, i := range order {
		n := g.lengths[i]
		if n <= trainLen {
			continue
		}
		a := rowMean(g.acc[i])
		if a < EffectiveShare*one || a < EffectiveFloor {
			break
		}
		eff = n
	}
	return eff
}

// effectiveTable writes each series' effective length by retrieval: the range over seeds, then
// each seed's, as multiples of the training length ("–" for a seed that does not retrieve at
// the training length).
func effectiveTable(w io.Writer, rep *measure.Report, sps []Series) {
	fmt.Fprintf(w, "\nEffective length by retrieval: the longest length up to which a run's accuracy (mean over depths) stays at least %g × its own at the training length and at least %s (`passkey.Effective`), as a multiple of the training length.\n\n| run | effective length | by seed |\n|---|---|---|\n",
		EffectiveShare, measure.Percent(EffectiveFloor))
	for _, sp := range sps {
		var lengths []int
		for _, r := range rep.Runs {
			if r.Label == sp.Label && r.Result.OK() {
				lengths = append(lengths, Effective(Of(r.Result), rep.TrainLen))
			}
		}
		span, each := measure.LengthSpread(lengths, rep.TrainLen)
		fmt.Fprintf(w, "| %s | %s | %s |\n", sp.Label, span, each)
	}
}
