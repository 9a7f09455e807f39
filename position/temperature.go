package position

import (
	"fmt"
	"strings"
)

// Temperature is an attention temperature: a factor on the scores of each query that depends on
// its head and position, for any scheme, as log-n scaling and Scalable-Softmax are. It acts
// through one of two optional interfaces, as a scheme does: QueryScaler with fixed numbers, or
// LearnedQueryScaler with weights of its own in every layer. A new temperature is one file, in
// this package or any other, that registers a constructor in its init function:
//
//	func init() { position.RegisterTemperature("mine", newMine) }
//
// and a config names it as attention.scale.
type Temperature interface {
	// Name is the name the temperature is registered under.
	Name() string
}

// QueryScaler multiplies the scores of each query by a fixed factor.
type QueryScaler interface {
	// QueryScale returns the factors for n positions, (heads, n): the scores of query i in head
	// h are multiplied by the value at h·n+i.
	QueryScale(n int) ([]float64, error)
}

// LearnedQueryScaler multiplies the scores of each query by a factor computed from weights of
// its own, a set in every layer: the model makes them in each layer, saves them in checkpoints
// and trains them.
type LearnedQueryScaler interface {
	Temperature
	// LayerWeights declares one layer's weights, in the order they are created and saved; the
	// model names them hL.NAME in layer L, after the layer's attention weights.
	LayerWeights() []Weight
	// LearnedQueryScale returns the factors for n positions, (heads, n), from one layer's
	// weights w.
	LearnedQueryScale(w [][]float64, n int) ([]float64, error)
	// LearnedQueryScaleGrad adds to dw the gradient of the loss with respect to each weight,
	// given dScale, its gradient with respect to the factors LearnedQueryScale returned.
	LearnedQueryScaleGrad(w [][]float64, n int, dScale []float64, dw [][]float64)
}

// TemperatureSpec is what a temperature is built from: the model's shape.
type TemperatureSpec struct {
	Heads int
	// TrainLen is the sequence length the model is trained at.
	TrainLen int
}

// TemperatureFactory builds a temperature, or says why it cannot be built for the spec.
type TemperatureFactory func(TemperatureSpec) (Temperature, error)

var temperatures = registry[TemperatureFactory]{kind: "temperature"}

// RegisterTemperature makes a temperature available by name. It panics if the name is taken,
// as Register does.
func RegisterTemperature(name string, f TemperatureFactory) { temperatures.add(name, f) }

// Temperatures lists the registered temperatures, sorted.
func Temperatures() []string { return temperatures.names() }

// NewTemperature builds the temperature registered as name, or none, a nil Temperature, for "".
// Its errors do not name the config field, which is the caller's (attention.scale).
func NewTemperature(name string, spec TemperatureSpec) (Temperature, error) {
	if name == "" {
		return nil, nil
	}
	f, ok := temperatures.lookup(name)
	if !ok {
		return nil, fmt.Errorf("unknown scale %q (known: %s)", name, strings.Join(Temperatures(), ", "))
	}
	if spec.Heads <= 0 {
		return nil, fmt.Errorf("%s for %d heads", name, spec.Heads)
	}
	return f(spec)
}

// needsTrainLen refuses a training length below 2: logn and ssmax divide by its log, which is
// zero at 1; logn_train keeps the same rule, so that a config means what it always has.
func needsTrainLen(name string, spec TemperatureSpec) error {
	if spec.TrainLen < 2 {
		return fmt.Errorf("%s needs a training length of at least 2, not %d", name, spec.TrainLen)
	}
	return nil
}

// byQuery lays out f(i), the same in every head, as a (heads, n) table.
func byQuery(heads, n int, f func(i int) float64) []float64 {
	v := make([]float64, heads*n)
	for i := 0; i < n; i++ {
		x := f(i)
		for h := 0; h < heads; h++ {
			v[h*n+i] = x
		}
	}
	return v
}
