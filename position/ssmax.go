package position

import "math"

// SSMax is Scalable-Softmax (Nakanishi 2025): the scores of the query at position i times
// s_h·log(i+1), the log of the number of keys it sees, with s_h learned per head and layer. s_h
// starts at 1/log(L), L the training length, so that the factor is 1 at the training length,
// and is not decayed.
type SSMax struct{ Heads, TrainLen int }

func init() {
	RegisterTemperature("ssmax", func(s TemperatureSpec) (Temperature, error) {
		if err := needsTrainLen("ssmax", s); err != nil {
			return nil, err
		}
		return SSMax(s), nil
	})
}

// Name is ssmax.
func (SSMax) Name() string { return "ssmax" }

// LayerWeights is s, one per head: hL.ssmax in layer L.
func (t SSMax) LayerWeights() []Weight {
	init := make([]float64, t.Heads)
	for h := range init {
		init[h] = 1 / math.Log(float64(t.TrainLen))
	}
	return []Weight{{Name: "ssmax", Dims: []int{t.Heads}, Init: init}}
}

// LearnedQueryScale is s_h·log(i+1) for each head h and query i.
func (t SSMax) LearnedQueryScale(w [][]float64, n int) ([]float64, error) {
	out := make([]float64, t.Heads*n)
	for h, s := range w[0] {
		for i := 0; i < n; i++ {
			out[h*n+i] = s * math.Log(float64(i+1))
		}
	}
	return out, nil
}

// LearnedQueryScaleGrad adds to s_h the sum over the queries of dScale times log(i+1).
func (t SSMax) LearnedQueryScaleGrad(_ [][]float64, n int, dScale []float64, dw [][]float64) {
	for h := range dw[0] {
		for i := 0; i < n; i++ {
			dw[0][h] += dScale[h*n+i] * math.Log(float64(i+1))
		}
	}
}
