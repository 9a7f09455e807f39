package schemeweights

import (
	"fmt"
	"path/filepath"
	"slices"

	"extrapolate/experiments/config"
	"extrapolate/experiments/measure"
)

// run is one measured run's weights, with its label and seed.
type run struct {
	label string
	seed  uint64
	w     *Weights
}

// measured reads the weights of the report's finished runs whose eval.measures name the measure,
// and checks them against each run's config: a results file without them, or with weights the
// run cannot have, is an error naming it.
func measured(rep *measure.Report) ([]run, error) {
	var out []run
	for _, r := range rep.Runs {
		if !r.Result.OK() || !slices.Contains(r.Config().Eval.Measures, measureName) {
			continue
		}
		path := filepath.Join(r.Dir, measure.ResultsJSON)
		w, err := Of(r.Result)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if w == nil {
			return nil, fmt.Errorf("%s: no %s, which eval.measures names", path, measureName)
		}
		if err := w.check(r.Config()); err != nil {
			return nil, fmt.Errorf("%s: %s: %w", path, measureName, err)
		}
		out = append(out, run{label: r.Label, seed: r.Seed, w: w})
	}
	return out, nil
}

// check refuses weights the run cannot have recorded: of another scheme or training length, or
// with other layers, heads or evaluation lengths than its config's.
func (w *Weights) check(c config.Config) error {
	m := c.Model
	switch {
	case w.Scheme != c.Position.Scheme:
		return fmt.Errorf("scheme %q, not the run's %q", w.Scheme, c.Position.Scheme)
	case w.TrainLen != c.Train.SeqLen:
		return fmt.Errorf("train_len %d, not the run's %d", w.TrainLen, c.Train.SeqLen)
	case (c.Position.Scheme == "fire") != (w.FIRE != nil), (c.Position.Scheme == "kerple") != (w.KERPLE != nil):
		return fmt.Errorf("the %s scheme's weights are missing or another scheme's", c.Position.Scheme)
	case w.FIRE != nil && len(w.FIRE) != m.Layers, w.KERPLE != nil && len(w.KERPLE) != m.Layers:
		return fmt.Errorf("weights of %d layers, not the run's %d", max(len(w.FIRE), len(w.KERPLE)), m.Layers)
	}
	for l, f := range w.FIRE {
		if len(f.Far) != len(c.Eval.Lengths) {
			return fmt.Errorf("fire[%d].far: %d lengths, not the run's %d", l, len(f.Far), len(c.Eval.Lengths))
		}
		for i, far := range f.Far {
			if far.Length != c.Eval.Lengths[i] || len(far.Bias) != m.Heads {
				return fmt.Errorf("fire[%d].far[%d]: length %d with %d heads, not %d with %d", l, i, far.Length, len(far.Bias), c.Eval.Lengths[i], m.Heads)
			}
		}
	}
	for l, k := range w.KERPLE {
		if len(k.R1) != m.Heads || len(k.R2) != m.Heads {
			return fmt.Errorf("kerple[%d]: %d and %d heads, not the run's %d", l, len(k.R1), len(k.R2), m.Heads)
		}
	}
	return nil
}
