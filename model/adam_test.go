package model

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestAdamVectorIsScalar requires the AVX2 AdamW step to leave weights and moments equal to the
// scalar loop's to the bit, over steps with clipping, decay, tiny and huge gradients, zeros and
// a length that leaves a scalar tail in each worker's range.
func TestAdamVectorIsScalar(t *testing.T) {
	if !haveAVX2 {
		t.Skip("no AVX2: adam is the scalar loop")
	}
	rng := rand.New(rand.NewPCG(7, 8))
	const n = 4099
	fill := func(scale float64) []float32 {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(rng.NormFloat64() * scale)
		}
		x[0], x[1], x[2] = 0, 1e-30, -3e30
		return x
	}
	w, m, v := fill(1), fill(0.01), fill(0.001)
	for i := range v {
		v[i] = float32(math.Abs(float64(v[i])))
	}
	w2, m2, v2 := append([]float32(nil), w...), append([]float32(nil), m...), append([]float32(nil), v...)
	for step := 1; step <= 3; step++ {
		g := fill(float64(step))
		h := adamStep{lr: 1e-3 * float64(step), clip: 0.7, b1: 0.9, b2: 0.95, eps: 1e-8,
			c1: 1 - math.Pow(0.9, float64(step)), c2: 1 - math.Pow(0.95, float64(step))}
		adam(h, 0.1, w, g, m, v)
		adamScalar(h, 0.1, w2, g, m2, v2)
	}
	for i := range w {
		if math.Float32bits(w[i]) != math.Float32bits(w2[i]) || math.Float32bits(m[i]) != math.Float32bits(m2[i]) || math.Float32bits(v[i]) != math.Float32bits(v2[i]) {
			t.Fatalf("element %d: vector (w %g, m %g, v %g), scalar (w %g, m %g, v %g)", i, w[i], m[i], v[i], w2[i], m2[i], v2[i])
		}
	}
}

// adamScalar is adam with the vector path switched off.
func adamScalar(h adamStep, wd float64, w, g, m, v []float32) {
	defer func(on bool) { haveAVX2 = on }(haveAVX2)
	haveAVX2 = false
	adam(h, wd, w, g, m, v)
}
