package schemeweights

import (
	"slices"

	"extrapolate/experiments/measure"
)

// fireStat is one layer of a label's FIRE over its seeds: the threshold's mean and range, and
// the means of the rest, the bias also over heads.
type fireStat struct {
	seeds                int
	threshold, low, high float64
	c, trainedInput      float64
	input, bias          []float64 // at each evaluation length
}

// fireStats aggregates layer l of the label's runs; false when none has FIRE's weights.
func fireStats(runs []run, label string, l int) (fireStat, bool) {
	var layers []FIRELayer
	for _, r := range runs {
		if r.label == label && l < len(r.w.FIRE) {
			layers = append(layers, r.w.FIRE[l])
		}
	}
	if len(layers) == 0 {
		return fireStat{}, false
	}
	of := func(f func(FIRELayer) float64) []float64 {
		out := make([]float64, len(layers))
		for i, x := range layers {
			out[i] = f(x)
		}
		return out
	}
	thresholds := of(func(x FIRELayer) float64 { return x.Threshold })
	st := fireStat{seeds: len(layers), threshold: mean(thresholds), low: slices.Min(thresholds), high: slices.Max(thresholds),
		c: mean(of(func(x FIRELayer) float64 { return x.C })), trainedInput: mean(of(func(x FIRELayer) float64 { return x.TrainedInput }))}
	for i := range layers[0].Far {
		st.input = append(st.input, mean(of(func(x FIRELayer) float64 { return x.Far[i].Input })))
		st.bias = append(st.bias, mean(of(func(x FIRELayer) float64 { return mean(x.Far[i].Bias) })))
	}
	return st, true
}

// kerpleStat is one layer of a label's KERPLE: r1 and r2 by head, each the mean over seeds.
type kerpleStat struct{ r1, r2 []float64 }

// kerpleStats aggregates layer l of the label's runs; false when none has KERPLE's weights.
func kerpleStats(runs []run, label string, l int) (kerpleStat, bool) {
	var st kerpleStat
	n := 0
	for _, r := range runs {
		if r.label != label || l >= len(r.w.KERPLE) {
			continue
		}
		k := r.w.KERPLE[l]
		if n == 0 {
			st.r1, st.r2 = make([]float64, len(k.R1)), make([]float64, len(k.R2))
		}
		for h := range k.R1 {
			st.r1[h] += k.R1[h]
			st.r2[h] += k.R2[h]
		}
		n++
	}
	for h := range st.r1 {
		st.r1[h] /= float64(n)
		st.r2[h] /= float64(n)
	}
	return st, n > 0
}

// mean is the mean of x.
func mean(x []float64) float64 {
	m, _ := measure.MeanStd(x)
	return m
}
