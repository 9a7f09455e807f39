package experiments

import (
	"fmt"

	"gorgonia.org/tensor"

	"extrapolate/internal/strictyaml"
	"extrapolate/model"
)

// Trained is a model loaded from a checkpoint, with the config that trained it.
type Trained struct {
	Config Config
	Model  *model.Model
	// Finished is false for a checkpoint saved in the middle of training.
	Finished bool
	// Progress says, for an unfinished checkpoint, how far training went: "train step 50 of
	// 200" or "finetune step 3 of 10".
	Progress string
}

// LoadCheckpoint reads a checkpoint and rebuilds its model. The config inside must decode and
// check like a config file, and every weight must match the shape that config gives it.
func LoadCheckpoint(path string) (*Trained, error) {
	meta, byName, err := readCheckpoint(path)
	if err != nil {
		return nil, err
	}
	c, err := meta.config(path)
	if err != nil {
		return nil, err
	}
	trainScheme, _, err := c.Schemes()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	// Compare the shapes the config gives the weights with the file's before building the
	// model, so a crafted config cannot make it allocate what the file does not hold.
	shapes, err := model.Shapes(c.ModelConfig(), trainScheme)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	for _, s := range shapes {
		x, ok := byName[s.Name]
		if !ok {
			return nil, fmt.Errorf("%s: the checkpoint has no weight %s that its config's model needs", path, s.Name)
		}
		if !x.Shape().Eq(tensor.Shape(s.Dims)) {
			return nil, fmt.Errorf("%s: weight %s has shape %v, its config gives it %v", path, s.Name, x.Shape(), s.Dims)
		}
	}
	m, err := c.newModel(trainScheme)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if err := loadParams(m, byName, path); err != nil {
		return nil, err
	}
	tr := &Trained{Config: c, Model: m, Finished: meta.State.Phase == phaseDone}
	if !tr.Finished {
		steps := c.Train.Steps
		if f := c.Train.Finetune; meta.State.Phase == phaseFinetune && f != nil {
			steps = f.Steps
		}
		tr.Progress = fmt.Sprintf("%s step %d of %d", meta.State.Phase, meta.State.Step, steps)
	}
	return tr, nil
}

// config decodes and checks the config a checkpoint holds, as a config file's.
func (m Meta) config(path string) (Config, error) {
	where := path + " (its config)"
	root, err := strictyaml.Parse(where, []byte(m.Config))
	if err != nil {
		return Config{}, err
	}
	return decodeRun(where, root, nil)
}
