package attention

import (
	"fmt"
	"math"
	"slices"

	"extrapolate/experiments/measure"
)

// finding says, at the longest length every label's attention was scored at, where attention
// is flattest and sharpest in the window's last octave of queries, the range of its share on
// far keys, and how that share ranks with perplexity.
func (s section) finding() string {
	rep := s.rep
	n := rep.Lengths[len(rep.Lengths)-1]
	type row struct {
		label  string
		st     Stat
		ppl    float64
		hasPPL bool
	}
	var rows []row
	for _, series := range rep.Series {
		st, ok := s.lastOctave(series.Label, n)
		if !ok {
			continue
		}
		r := row{label: series.Label, st: st}
		if ps, ok := rep.At(series, n/rep.TrainLen); ok && n%rep.TrainLen == 0 {
			r.ppl, r.hasPPL = ps.PPLMean, true
		}
		rows = append(rows, r)
	}
	if len(rows) < 2 {
		return ""
	}
	by := func(less func(a, b row) int) (row, row) {
		return slices.MinFunc(rows, less), slices.MaxFunc(rows, less)
	}
	sharp, flat := by(func(a, b row) int { return cmpFloat(a.st.EntropyMean, b.st.EntropyMean) })
	near, far := by(func(a, b row) int { return cmpFloat(a.st.FarMean, b.st.FarMean) })
	text := fmt.Sprintf("At %d tokens (%gx the training length), in the window's last octave of queries, attention is flattest in %s (%.2f nats, %s of uniform attention's %.2f) and sharpest in %s (%.2f nats); its share on keys at least %d back ranges from %s in %s to %s in %s.",
		n, float64(n)/float64(rep.TrainLen), flat.label, flat.st.EntropyMean, measure.Percent(flat.st.EntropyMean/flat.st.Uniform), flat.st.Uniform,
		sharp.label, sharp.st.EntropyMean, rep.TrainLen, measure.Percent(near.st.FarMean), near.label, measure.Percent(far.st.FarMean), far.label)
	var shares, ppls []float64
	for _, r := range rows {
		if r.hasPPL {
			shares, ppls = append(shares, r.st.FarMean), append(ppls, r.ppl)
		}
	}
	if len(shares) >= 3 {
		text += fmt.Sprintf(" Over the %d runs scored there, the rank correlation (Spearman) of that share with perplexity is %.2f.", len(shares), spearman(shares, ppls))
	}
	return text
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// spearman is the rank correlation of x and y: the Pearson correlation of their ranks, ties
// given their mean rank.
func spearman(x, y []float64) float64 {
	rx, ry := ranks(x), ranks(y)
	mx, _ := measure.MeanStd(rx)
	my, _ := measure.MeanStd(ry)
	var sxy, sxx, syy float64
	for i := range rx {
		sxy += (rx[i] - mx) * (ry[i] - my)
		sxx += (rx[i] - mx) * (rx[i] - mx)
		syy += (ry[i] - my) * (ry[i] - my)
	}
	if sxx == 0 || syy == 0 {
		return math.NaN()
	}
	return sxy / math.Sqrt(sxx*syy)
}

// ranks gives each value its rank among x, from 1, ties their mean rank.
func ranks(x []float64) []float64 {
	idx := make([]int, len(x))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmpFloat(x[a], x[b]) })
	out := make([]float64, len(x))
	for i := 0; i < len(idx); {
		j := i
		for j+1 < len(idx) && x[idx[j+1]] == x[idx[i]] {
			j++
		}
		for k := i; k <= j; k++ {
			out[idx[k]] = float64(i+j)/2 + 1
		}
		i = j + 1
	}
	return out
}
