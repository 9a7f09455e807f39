package config

// What a config builds: the schemes of its phases, the model config, the memory it needs, and
// the value that carries them once built (Resolved).

import (
	"fmt"

	"extrapolate/data"
	"extrapolate/model"
	"extrapolate/position"
	"extrapolate/task"
)

// Resolved is a config checked once and what it builds, built once: the position schemes of its
// phases, the model config and the memory estimate. A run, its checkpoint and its comparison
// carry it instead of building them again, so that a scheme is constructed once per config and
// never disagrees with the one the checks were made on. It is not changed after Resolve.
type Resolved struct {
	config      Config
	train, eval position.Scheme
	ids         *position.IDs
	model       model.Config
	memory      MemoryEstimate
	tasks       []task.Task
	examples    int
}

// Resolve checks every field as Check does, in the same order, and returns the config with what
// it builds. It is the only place a config's schemes are built.
func (c Config) Resolve() (*Resolved, error) {
	if err := c.checkFields(); err != nil {
		return nil, err
	}
	tasks, examples, err := c.tasks()
	if err != nil {
		return nil, err
	}
	train, eval, err := c.schemes()
	if err != nil {
		return nil, err
	}
	if err := c.checkDroPEScheme(train); err != nil {
		return nil, err
	}
	// What the model refuses of the attention section with these schemes (softpick with
	// stick-breaking, sinks with FoX), said here, naming the field, not when a run starts.
	for _, s := range []position.Scheme{train, eval} {
		if err := c.modelConfig().CheckScheme(s); err != nil {
			return nil, err
		}
	}
	if err := c.checkSchemeLengths(train, eval); err != nil {
		return nil, err
	}
	ids, err := c.positionIDs(train)
	if err != nil {
		return nil, err
	}
	mem := c.estimateMemory(train, eval, ids)
	if err := mem.check(); err != nil {
		return nil, err
	}
	return &Resolved{config: c, train: train, eval: eval, ids: ids, model: c.modelConfig(), memory: mem, tasks: tasks, examples: examples}, nil
}

// PositionIDs draws the position ids of the main phase's training batches (train.positions):
// nil for 0..n−1.
func (r *Resolved) PositionIDs() *position.IDs { return r.ids }

// Tasks are the tasks the run trains on and is scored on, in the order task.names gives them,
// and the held-out examples scored at each size; none without a task section.
func (r *Resolved) Tasks() ([]task.Task, int) { return r.tasks, r.examples }

// Config is the resolved config. Its pointer and slice fields are shared: they must not be
// changed.
func (r *Resolved) Config() Config { return r.config }

// Schemes are the position scheme the model trains with in the main phase and the one it is
// evaluated with, and trained with after the main phase (fine-tuning, DroPE's steps without
// positions).
func (r *Resolved) Schemes() (train, eval position.Scheme) { return r.train, r.eval }

// ModelConfig is the config the model is built from.
func (r *Resolved) ModelConfig() model.Config { return r.model }

// Memory is what a run of the config needs in memory.
func (r *Resolved) Memory() MemoryEstimate { return r.memory }

// WithSeed is the same config under another run name and seed, as a comparison plans a run for
// each of its seeds. Neither enters a scheme, the model config or the memory estimate, so the
// seeds of a run share what was built for it.
func (r *Resolved) WithSeed(name string, seed uint64) *Resolved {
	s := *r
	s.config.Name, s.config.Seed = name, seed
	return &s
}

// WithEval is the config with the evaluation section e in place of its own, resolved again: a
// new value, r unchanged. The section enters the checks of the lengths and the memory
// estimate, which Resolve makes again.
func (r *Resolved) WithEval(e Eval) (*Resolved, error) {
	c := r.config
	c.Eval = e
	return c.Resolve()
}

// WithExamples is the config scored on n held-out examples a size in place of its
// task.examples, resolved again: a new value, r unchanged. The config must train on tasks.
func (r *Resolved) WithExamples(n int) (*Resolved, error) {
	c := r.config
	if c.Task == nil {
		return nil, fmt.Errorf("task.examples: the config trains on the corpus, not on tasks")
	}
	tc := *c.Task
	tc.Examples = n
	c.Task = &tc
	return c.Resolve()
}

// MainPhase is the config of the main training phase. The one rule of the protocol about
// scalings lives here: a RoPE scaling applies when evaluating and fine-tuning, never in the main
// phase at the training length, so that phase trains without it. A distance map
// (position.distance_map) applies when evaluating only, and so is dropped here too.
func (c Config) MainPhase() Config {
	c.Position.Scaling = nil
	c.Position.DistanceMap = nil
	return c
}

// EvalPhase is the config of evaluation and of the phases after the main one: the config as
// given, or, with train.drope, without positions (DroppedScheme). Whatever evaluates, samples
// or exports a trained model builds its scheme from this position section.
func (c Config) EvalPhase() Config {
	if c.Train.DroPE != nil {
		c.Position = position.Config{Scheme: DroppedScheme}
	}
	return c
}

// schemes builds the position scheme the model trains with in the main phase and the one it is
// evaluated (and trained after the main phase) with. Resolve calls it once per config.
func (c *Config) schemes() (train, eval position.Scheme, err error) {
	if eval, err = position.New(c.Spec(c.EvalPhase().Position)); err != nil {
		return nil, nil, err
	}
	if train, err = position.New(c.Spec(c.MainPhase().Position)); err != nil {
		return nil, nil, err
	}
	return train, eval, nil
}

// modelConfig is the model section with what the model takes from the rest of the config: the
// tokenizer's vocabulary, the attention section and the training length.
func (c *Config) modelConfig() model.Config {
	mc := c.Model
	mc.Vocab, mc.Attention, mc.TrainLen = data.Vocab, c.Attention, c.Train.SeqLen
	return mc
}

// Spec is what a position scheme of this config is built from, with the position section pc.
func (c *Config) Spec(pc position.Config) position.Spec {
	return position.Spec{DModel: c.Model.DModel, Heads: c.Model.Heads, Layers: c.Model.Layers, TrainLen: c.Train.SeqLen, Config: pc}
}
