package compare

import (
	"fmt"
	"path/filepath"

	"extrapolate/experiments/config"
	"extrapolate/experiments/training"
)

// planCheckpoints plans the runs of the i-th entry, spec, whose models were trained elsewhere
// (RunSpec.Checkpoints): a run a seed, each evaluating its checkpoint with the config it was
// trained with, the overrides all applied over it. The overrides may change the evaluation only
// (eval, a RoPE scaling at evaluation): a run that would train otherwise is refused, naming the
// checkpoint. labels are the labels taken so far; first is the first run's config, whose
// protocol every run shares.
func (c *Config) planCheckpoints(i int, spec RunSpec, all []config.Override, labels map[string]bool, first *config.Config) ([]Planned, error) {
	field := fmt.Sprintf("runs[%d].checkpoints", i)
	switch {
	case spec.Config != "":
		return nil, fmt.Errorf("runs[%d]: config and checkpoints both given: a run trains from its config or evaluates checkpoints trained elsewhere", i)
	case len(spec.Checkpoints) != len(c.Seeds):
		return nil, fmt.Errorf("%s: %d checkpoints for %d seeds: give one for each seed, in the order of seeds", field, len(spec.Checkpoints), len(c.Seeds))
	case spec.Label == "":
		return nil, fmt.Errorf("runs[%d].label: missing: a run of checkpoints is named by its label", i)
	}
	if err := takeLabel(i, spec.Label, labels); err != nil {
		return nil, err
	}
	var out []Planned
	for k, path := range spec.Checkpoints {
		at := fmt.Sprintf("%s[%d]", field, k)
		trained, resolved, err := training.CheckpointConfig(path, all)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", at, err)
		}
		base := resolved.Config()
		if !sameTraining(trained.Config(), base) {
			return nil, fmt.Errorf("%s: the set changes how %s was trained; a run of checkpoints takes evaluation settings only", at, path)
		}
		if first != nil {
			if err := sameProtocol(*first, base); err != nil {
				return nil, fmt.Errorf("runs[%d] (%s): %w", i, spec.Label, err)
			}
		}
		name := fmt.Sprintf("%s-s%d", spec.Label, c.Seeds[k])
		if err := config.CheckName(fmt.Sprintf("runs[%d].label", i), name); err != nil {
			return nil, err
		}
		abs, err := filepath.Abs(path)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", at, err)
		}
		// The checkpoint's own seed, which its weights were drawn from; the run is the
		// comparison's seed's.
		rc := resolved.WithSeed(name, base.Seed)
		out = append(out, Planned{Label: spec.Label, Seed: c.Seeds[k], Resolved: rc,
			Dir: filepath.Join(RunsDir, name), Checkpoint: abs})
	}
	return out, nil
}

// sameTraining says whether b trains as a does: the same config but for its name and its
// evaluation, and, for a model that was not fine-tuned, its RoPE scaling (training.Key).
func sameTraining(a, b config.Config) bool {
	if ka := training.Key(a); ka != "" {
		return ka == training.Key(b)
	}
	a.Name, b.Name = "", ""
	a.Eval, b.Eval = config.Eval{}, config.Eval{}
	return string(a.Marshal()) == string(b.Marshal())
}
