package training

import (
	"fmt"

	"extrapolate/experiments/measure"
	"extrapolate/model"
	"extrapolate/position"
)

// trainPhase is one phase of a run's training: what it trains with, on which batches, for how
// many steps, and the learning-rate schedule it sets (nil: the run's goes on).
type trainPhase struct {
	name            string
	scheme          position.Scheme
	batch, n, steps int
	// positions draws each batch's position ids (train.positions), nil for 0..n−1.
	positions *position.IDs
	schedule  *model.Schedule
	// announce is said on the progress writer when the phase starts.
	announce string
}

// phases lists the run's phases in order: the main phase; DroPE's steps without positions
// (train.drope); fine-tuning (train.finetune). The phases after the main one train with the
// evaluation scheme: the scaled one for fine-tuning, none for DroPE; and at positions 0..n−1,
// as evaluation sees them, whatever position ids the main phase draws (train.positions).
func (r *Run) phases() []trainPhase {
	c := r.config()
	train, eval := r.Resolved.Schemes()
	out := []trainPhase{{name: phaseTrain, scheme: train, batch: c.Train.BatchSize, n: c.Train.SeqLen, steps: c.Train.MainSteps(), positions: r.Resolved.PositionIDs()}}
	if k := c.Train.DroppedSteps(); k > 0 {
		// The same batches, optimizer state and schedule: only the positions go.
		out = append(out, trainPhase{
			name: phaseRecalibrate, scheme: eval, batch: c.Train.BatchSize, n: c.Train.SeqLen, steps: k,
			announce: fmt.Sprintf("%s: step %d: dropping the %s scheme, %d steps on without positions (DroPE)", c.Name, c.Train.MainSteps(), train.Name(), k),
		})
	}
	if f := c.Train.Finetune; f != nil {
		// The same tokens per batch at the longer length, and a constant learning rate.
		out = append(out, trainPhase{
			name: phaseFinetune, scheme: eval, batch: max(1, c.Train.BatchSize*c.Train.SeqLen/f.SeqLen), n: f.SeqLen, steps: f.Steps,
			schedule: &model.Schedule{LR: f.LR, MinLR: f.LR},
		})
	}
	return out
}

// phaseIndex is the place of the phase named name in phases, len(phases) for done, and -1
// for a phase the run does not have.
func phaseIndex(phases []trainPhase, name string) int {
	if name == phaseDone {
		return len(phases)
	}
	for i, p := range phases {
		if p.name == name {
			return i
		}
	}
	return -1
}

// phaseRecords says, for the results of a run trained in more than one phase, what each phase
// was and which scheme evaluates it; nothing for a run of one phase, whose results file stays
// as it was.
func (r *Run) phaseRecords() ([]measure.Phase, string) {
	phases := r.phases()
	if len(phases) < 2 {
		return nil, ""
	}
	var out []measure.Phase
	first := 1
	for _, p := range phases {
		out = append(out, measure.Phase{Name: p.name, Scheme: schemeName(p.scheme), FirstStep: first, LastStep: first + p.steps - 1})
		first += p.steps
	}
	_, eval := r.Resolved.Schemes()
	return out, schemeName(eval)
}

// schemeName names a scheme with the RoPE scaling in force in it, if any.
func schemeName(s position.Scheme) string {
	if sc, _ := position.ScalingOf(s); sc != nil {
		return fmt.Sprintf("%s %s(factor=%s)", s.Name(), sc.Type, sc.Factor)
	}
	return s.Name()
}
