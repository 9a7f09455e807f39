package measure

import (
	"hash/fnv"

	"extrapolate/internal/rng"
	"extrapolate/model"
	"extrapolate/position"
)

// WindowIDs draws the position ids of evaluation windows, for a run whose kind of training ids
// is drawn at evaluation too (position.IDs.AtEvaluation, randomized positions): each window's
// from a generator of its own, seeded from the run's seed and what names the window (its kind,
// length and place), never from training's generator. A window so gets the same ids whatever
// batch it is in, whichever measure or command scores it, and whether or not the run was
// resumed, so that a report is reproducible. A nil *WindowIDs places token t at t, and its
// methods do what evaluation did before ids existed.
type WindowIDs struct {
	ids  *position.IDs
	seed uint64
}

// windowSeed sets the evaluation's ids apart from the generators of the weights (Seed), the
// training batches (Seed+1) and the training ids (Seed+2).
const windowSeed = 3

// NewWindowIDs returns the window ids of a run of that seed trained at ids, the run's
// train.positions as its config resolved them (config.Resolved.PositionIDs): nil unless their
// kind is drawn at evaluation.
func NewWindowIDs(ids *position.IDs, seed uint64) *WindowIDs {
	if !ids.AtEvaluation() {
		return nil
	}
	return &WindowIDs{ids: ids, seed: seed + windowSeed}
}

// Graph builds the evaluation graph of batch windows of n tokens with the scheme s, at position
// ids when w is not nil: an error for which model.IsNotApplicable is true when the range the
// ids are drawn from has fewer than n positions.
func (w *WindowIDs) Graph(m *model.Model, s position.Scheme, batch, n int, o model.Options) (*model.Graph, error) {
	if w != nil {
		if err := w.ids.WindowApplicable(n); err != nil {
			return nil, err
		}
		o.PositionRange = w.ids.Range
	}
	return m.Graph(s, batch, n, o)
}

// Draw writes the ids of sequence b of g, a graph Graph built, for the window named by kind and
// key: what kind of window it is ("text", "passkey", a task's name) and the numbers that set it
// apart from every other of its kind, its length first. It does nothing for a nil w.
func (w *WindowIDs) Draw(g *model.Graph, b int, kind string, key ...int) {
	if w == nil {
		return
	}
	h := fnv.New64a()
	h.Write([]byte(kind))
	state := mix(w.seed, h.Sum64())
	for _, k := range key {
		state = mix(state, uint64(k))
	}
	gen := rng.SplitMix64{State: state}
	n := g.Len
	w.ids.DrawWindow(&gen, g.Positions[b*n:(b+1)*n])
}

// mix folds x into the state s: one SplitMix64 step of s xor x, a bijection of s for a given x
// whose output bits each depend on every input bit.
func mix(s, x uint64) uint64 {
	g := rng.SplitMix64{State: s ^ x}
	return g.Next()
}

// WindowIDs returns the window ids of the evaluated run (NewWindowIDs).
func (ev *Evaluation) WindowIDs() *WindowIDs {
	return NewWindowIDs(ev.Resolved.PositionIDs(), ev.Config().Seed)
}
