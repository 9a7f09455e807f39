package experiments

import (
	"fmt"

	"extrapolate/model"
)

// Trained is a model loaded from a checkpoint, with the config that trained it.
type Trained struct {
	Config Config
	Model  *model.Model
	// Finished is false for a checkpoint saved in the middle of training.
	Finished bool
}

// LoadCheckpoint reads a checkpoint and rebuilds its model. The config inside must decode and
// check like a config file, and every weight must match the shape that config gives it.
func LoadCheckpoint(path string) (*Trained, error) {
	meta, byName, err := readCheckpoint(path)
	if err != nil {
		return nil, err
	}
	root, err := parseYAML(path+" (its config)", []byte(meta.Config))
	if err != nil {
		return nil, err
	}
	c, err := decodeRun(path+" (its config)", root, nil)
	if err != nil {
		return nil, err
	}
	trainScheme, _, err := c.Schemes()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	m, err := c.newModel(trainScheme)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if err := loadParams(m, byName, path); err != nil {
		return nil, err
	}
	return &Trained{Config: c, Model: m, Finished: meta.State.Phase == phaseDone}, nil
}
