package training

import (
	"fmt"

	"extrapolate/experiments/config"
)

// Untrained is the model a config trains, as train draws it before its first step, as a Trained
// saved at step 0: what cmd/export writes for a trainer elsewhere to train the config from
// scratch (pytorch/train.py).
func Untrained(r *config.Resolved) (*Trained, error) {
	m, err := newModel(r)
	if err != nil {
		return nil, err
	}
	c := r.Config()
	return &Trained{Resolved: r, Model: m, Progress: fmt.Sprintf("%s step 0 of %d", phaseTrain, c.Train.MainSteps())}, nil
}
