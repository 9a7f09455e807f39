package training

import (
	"encoding/json"
	"fmt"

	"gorgonia.org/tensor"

	"extrapolate/checkpoint"
	"extrapolate/experiments/config"
)

// ImportRecord is where an imported checkpoint came from: the export's folder, its weights'
// checksum, and what config.json says trained them (pytorch/train.py's "trained" record).
type ImportRecord struct {
	From          string          `json:"from"`
	WeightsSHA256 string          `json:"weights_sha256"`
	Rounded       bool            `json:"rounded_from_float64,omitempty"`
	Trained       json.RawMessage `json:"trained,omitempty"`
}

// Adopted is a model trained elsewhere, its weights given to its config's model, as the
// finished checkpoint of a run of that config would hold it (Adopt).
type Adopted struct {
	*Trained
	meta    Meta
	tensors []checkpoint.Tensor
}

// Adopt gives the weights ts, the ones rc's model has, in its order, to that model, finished,
// as LoadCheckpoint would give it from the checkpoint Write writes: what cmd/import makes of an
// export. The checkpoint records rec, where the weights came from; path names them in errors.
func Adopt(rc *config.Resolved, ts []checkpoint.Tensor, rec *ImportRecord, path string) (*Adopted, error) {
	trainScheme, _ := rc.Schemes()
	meta := Meta{Program: Program, Config: string(rc.Config().Marshal()), Tokenizer: byteTokenizer,
		State: trainState{Phase: phaseDone, Step: lastSteps(rc.Config())}, Scheme: schemeJSON(trainScheme), Imported: rec}
	m, err := newModel(rc)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	byName := map[string]*tensor.Dense{}
	for _, t := range ts {
		byName[t.Name] = t.Value
	}
	if err := loadParams(m, byName, path); err != nil {
		return nil, err
	}
	return &Adopted{Trained: &Trained{Resolved: rc, Model: m, Finished: true}, meta: meta, tensors: ts}, nil
}

// Write writes the checkpoint to path, atomically.
func (a *Adopted) Write(path string) error { return checkpoint.Write(path, a.meta, a.tensors) }

// lastSteps is the steps of the config's last training phase: what a finished run's state
// records.
func lastSteps(c config.Config) int {
	if f := c.Train.Finetune; f != nil {
		return f.Steps
	}
	if k := c.Train.DroppedSteps(); k > 0 {
		return k
	}
	return c.Train.MainSteps()
}
