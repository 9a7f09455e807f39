package measure

import (
	"gorgonia.org/tensor"

	"extrapolate/experiments/config"
	"extrapolate/model"
)

// The run small enough for a unit test comes from testrun, as for the run's and the
// comparison's tests.

// newModel builds a fresh (untrained) model of a resolved config with its main phase's scheme,
// as a run does before training.
func newModel(r *config.Resolved) (*model.Model, error) {
	train, _ := r.Schemes()
	return model.New(r.ModelConfig(), train, tensor.Float32, r.Config().Seed)
}
