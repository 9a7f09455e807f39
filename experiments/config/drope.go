package config

// DroPE (Gelberg et al. 2025): train with a rotary scheme, drop it for the last steps, and
// evaluate without positions. This file holds its section, its checks and the split of the
// steps; the trainer runs the phases (experiments/training).

import (
	"fmt"
	"math"

	"extrapolate/position"
)

// DroPE is the train.drope section. The run trains with its rotary scheme for the first steps,
// then drops every position encoding and trains on without any (NoPE) for the rest, the
// paper's recalibration, with the same optimizer state and the learning-rate schedule going on
// where it was: the paper's from-scratch runs drop RoPE within one training run, and its code
// only recalibrates finished models, in a new run with a fresh optimizer, which does not fit a
// run that is one schedule. The model is then evaluated, sampled and exported without positions.
type DroPE struct {
	// Fraction is the share of train.steps, at the end, trained without positions, in (0, 1).
	Fraction float64 `yaml:"fraction"`
}

// DroppedScheme is the scheme a DroPE run recalibrates and is evaluated with: none.
const DroppedScheme = "nope"

// split returns the steps of the two phases of a run of total steps: with positions, then
// without, round(fraction·total) of them, halves rounded away from zero (math.Round), so that
// 0.125 of 1500 steps is 188 and the switch comes after step 1312.
func (d DroPE) split(total int) (main, dropped int) {
	dropped = int(math.Round(d.Fraction * float64(total)))
	return total - dropped, dropped
}

// MainSteps is the number of steps of the main phase: train.steps, or with train.drope the
// steps before positions are dropped.
func (t Train) MainSteps() int {
	if t.DroPE == nil {
		return t.Steps
	}
	main, _ := t.DroPE.split(t.Steps)
	return main
}

// DroppedSteps is the number of steps trained without positions: 0 without train.drope.
func (t Train) DroppedSteps() int {
	if t.DroPE == nil {
		return 0
	}
	_, dropped := t.DroPE.split(t.Steps)
	return dropped
}

// checkDroPE refuses a fraction that is not one, a split that leaves a phase without a step,
// and the settings DroPE has no place for. checkRanges has made sure train.steps is positive.
func (c Config) checkDroPE() error {
	d := c.Train.DroPE
	if d == nil {
		return nil
	}
	if !(d.Fraction > 0 && d.Fraction < 1) {
		return fmt.Errorf("train.drope.fraction: %v, want a fraction in (0, 1)", d.Fraction)
	}
	if main, dropped := d.split(c.Train.Steps); main < 1 || dropped < 1 {
		return fmt.Errorf("train.drope.fraction: %v of train.steps %d rounds to %d steps without positions, want at least 1 and at most %d", d.Fraction, c.Train.Steps, dropped, c.Train.Steps-1)
	}
	// The run is evaluated without positions: a scaling would have nothing to scale.
	if c.Position.Scaling != nil {
		return fmt.Errorf("train.drope: not with position.scaling, which would scale nothing: the run is evaluated without positions")
	}
	// DroPE's point is to extend the context without training at a longer length.
	if c.Train.Finetune != nil {
		return fmt.Errorf("train.drope: not with train.finetune: DroPE extends the context without training at a longer length")
	}
	return nil
}

// checkDroPEScheme refuses a scheme that DroPE does not apply to: one that acts anywhere but
// on the queries and keys by rotating them. The paper drops RoPE, whose rotation leaves
// nothing behind; a table on the embeddings (learned, sinusoidal) or a bias on the scores
// (ALiBi, T5, KERPLE, FIRE) is another intervention it did not study, and the learned ones
// would leave weights that the steps without positions never train. train is the main
// phase's scheme.
func (c Config) checkDroPEScheme(train position.Scheme) error {
	if c.Train.DroPE == nil {
		return nil
	}
	rotates := false
	for l := 0; l < c.Model.Layers; l++ {
		s := position.InLayer(train, l).Scheme
		what, err := droppable(s)
		if err != nil {
			return fmt.Errorf("train.drope: %v", err)
		}
		if what != "" {
			name := c.Position.Scheme
			if position.IsPerLayer(train) {
				name += fmt.Sprintf(" (its layer %d, %s)", l, s.Name())
			}
			return fmt.Errorf("train.drope: position.scheme %s %s; DroPE drops a scheme that only rotates queries and keys (rope, xpos, a mix of those and nope)", name, what)
		}
		rot, err := position.RotationAt(s, 1)
		if err != nil {
			return fmt.Errorf("train.drope: %v", err)
		}
		rotates = rotates || rot != nil
	}
	if !rotates {
		return fmt.Errorf("train.drope: position.scheme %s gives no rotation to drop; DroPE drops a scheme that rotates queries and keys (rope, xpos, a mix of those and nope)", c.Position.Scheme)
	}
	return nil
}

// droppable says what s does besides rotating, "" for nothing.
func droppable(s position.Scheme) (string, error) {
	table, err := position.TableForm(s)
	if err != nil {
		return "", err
	}
	bias, err := position.BiasForm(s)
	if err != nil {
		return "", err
	}
	switch {
	case table != position.Absent:
		return "adds a table to the embeddings", nil
	case bias != position.Absent:
		return "adds a bias to the attention scores", nil
	case len(position.WeightsOf(s)) > 0:
		return "has weights of its own", nil
	}
	return "", nil
}
