package experiments

// What a config builds: the schemes of its phases, and the specs and model config they are
// built from.

import (
	"extrapolate/data"
	"extrapolate/model"
	"extrapolate/position"
)

// mainPhase is the config of the main training phase. The one rule of the protocol about
// scalings lives here: a RoPE scaling applies when evaluating and fine-tuning, never in the main
// phase at the training length, so that phase trains without it.
func (c Config) mainPhase() Config {
	c.Position.Scaling = nil
	return c
}

// Schemes builds the position scheme the model trains with in the main phase and the one it is
// evaluated (and fine-tuned) with.
func (c *Config) Schemes() (train, eval position.Scheme, err error) {
	if eval, err = position.New(c.Spec(c.Position)); err != nil {
		return nil, nil, err
	}
	if train, err = position.New(c.Spec(c.mainPhase().Position)); err != nil {
		return nil, nil, err
	}
	return train, eval, nil
}

// ModelConfig is the model section with what the model takes from the rest of the config: the
// tokenizer's vocabulary, the attention section and the training length.
func (c *Config) ModelConfig() model.Config {
	mc := c.Model
	mc.Vocab, mc.Attention, mc.TrainLen = data.Vocab, c.Attention, c.Train.SeqLen
	return mc
}

// Spec is what a position scheme of this config is built from, with the position section pc.
func (c *Config) Spec(pc position.Config) position.Spec {
	return position.Spec{DModel: c.Model.DModel, Heads: c.Model.Heads, Layers: c.Model.Layers, TrainLen: c.Train.SeqLen, Config: pc}
}
