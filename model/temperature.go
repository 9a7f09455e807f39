package model

import (
	"fmt"

	"extrapolate/position"
)

// Attention is the config's attention section, for any position scheme: a temperature on each
// query's scores that grows with its position, and the normaliser of the scores. Scale names a
// temperature registered with position.RegisterTemperature: logn (Qwen's inference-time log-n
// scaling), logn_train (Chiang & Cholak's, in training too), ssmax (Scalable-Softmax), or one of
// your own. The model asks it for its factors through the position package's adapter, never by
// its name. Normaliser is softmax (the default) or softpick (normaliser.go); Gate is none (the
// default), elementwise or headwise (gate.go); Sinks gives each head of each layer a learned
// sink logit (sinks.go).
type Attention struct {
	Scale      string `yaml:"scale,omitempty"`
	Normaliser string `yaml:"normaliser,omitempty"`
	Gate       string `yaml:"gate,omitempty"`
	Sinks      bool   `yaml:"sinks,omitempty"`
}

// temperature builds the temperature the config names, nil for none, with errors naming the
// config field.
func (c Config) temperature() (position.Temperature, error) {
	t, err := position.NewTemperature(c.Attention.Scale, position.TemperatureSpec{Heads: c.Heads, TrainLen: c.TrainLen})
	if err != nil {
		return nil, fmt.Errorf("attention.scale: %w", err)
	}
	return t, nil
}

// queryScaleOf computes one layer's learned query factors from the temperature's weights.
type queryScaleOf struct {
	t position.Temperature
	n int
}

func (q queryScaleOf) Forward(in [][]float64, out []float64) error {
	v, err := position.QueryScaleAt(q.t, in, q.n)
	if err != nil {
		return err
	}
	copy(out, v)
	return nil
}

func (q queryScaleOf) Backward(in [][]float64, dout []float64, din [][]float64) {
	position.QueryScaleGrad(q.t, in, q.n, dout, din)
}
