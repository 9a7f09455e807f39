package schemeweights

import "extrapolate/position"

// fireLayers reads each layer's threshold and c, and the MLP's input and bias at the farthest key
// of a training window and of a window of each evaluation length: one row of keys each, never
// the bias's heads·n² values.
func fireLayers(f position.FIRE, w [][]float64, trainLen int, lengths []int) []FIRELayer {
	out := make([]FIRELayer, f.Layers)
	for l := range out {
		c, m := f.Scale(w, l)
		out[l] = FIRELayer{C: c, M: m, Threshold: f.Threshold(w, l), TrainedInput: f.Input(w, l, trainLen-1, 0)}
		for _, n := range lengths {
			far := Far{Length: n, Input: f.Input(w, l, n-1, 0), Bias: make([]float64, f.Heads)}
			for h := range far.Bias {
				f.LearnedBiasRow(w, l, h, n-1, 0, far.Bias[h:h+1])
			}
			out[l].Far = append(out[l].Far, far)
		}
	}
	return out
}
