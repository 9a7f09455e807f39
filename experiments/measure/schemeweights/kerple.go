package schemeweights

import "extrapolate/position"

// kerpleLayers reads each layer's r1 and r2 by head, (layers, heads) in KERPLE's weights.
func kerpleLayers(k position.KERPLE, w [][]float64) []KERPLELayer {
	out := make([]KERPLELayer, k.Layers)
	for l := range out {
		out[l] = KERPLELayer{R1: w[0][l*k.Heads : (l+1)*k.Heads], R2: w[1][l*k.Heads : (l+1)*k.Heads]}
	}
	return out
}
