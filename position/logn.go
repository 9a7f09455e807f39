package position

import "math"

// LogN is Qwen's inference-time log-n attention scaling (logn_attn): the scores of the query at
// position i times max(1, log(i+1)/log(L)), L the training length, which is math.log(i,
// seq_length) past the training length and 1 within it. The factor is 1 at every position seen
// in training, so a run trains exactly as without it, and attention over n keys stays as sharp
// as it was over L.
type LogN struct{ Heads, TrainLen int }

// LogNTrain is the log-length scaled attention of Chiang & Cholak 2022, in training as at
// evaluation: the scores of the query at position i times log(i+1), the log of the number of
// keys it attends to.
type LogNTrain struct{ Heads int }

func init() {
	RegisterTemperature("logn", func(s TemperatureSpec) (Temperature, error) {
		if err := needsTrainLen("logn", s); err != nil {
			return nil, err
		}
		return LogN(s), nil
	})
	RegisterTemperature("logn_train", func(s TemperatureSpec) (Temperature, error) {
		if err := needsTrainLen("logn_train", s); err != nil {
			return nil, err
		}
		return LogNTrain{Heads: s.Heads}, nil
	})
}

// Name is logn.
func (LogN) Name() string { return "logn" }

// QueryScale is max(1, log(i+1)/log(L)) for each head and query.
func (t LogN) QueryScale(n int) ([]float64, error) {
	return byQuery(t.Heads, n, func(i int) float64 {
		return math.Max(1, math.Log(float64(i+1))/math.Log(float64(t.TrainLen)))
	}), nil
}

// Name is logn_train.
func (LogNTrain) Name() string { return "logn_train" }

// QueryScale is log(i+1) for each head and query.
func (t LogNTrain) QueryScale(n int) ([]float64, error) {
	return byQuery(t.Heads, n, func(i int) float64 { return math.Log(float64(i + 1)) }), nil
}
