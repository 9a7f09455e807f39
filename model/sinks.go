package model

import (
	"fmt"

	"extrapolate/position"
)

// The attention section's sinks give each head of each layer a learned sink logit, hL.sinks, as
// gpt-oss has (nn.AttentionConfig.Sinks): a term e^{s_h} in each query's softmax that goes to no
// value, so that a head may attend to nothing.

// checkSinks refuses sinks with what the attention op does not take them with yet: softpick, a
// scheme that replaces the softmax (stick-breaking), forget gates (FoX) or contextual positions
// (CoPE) in some layer. Sliding windows (gpt-oss's banded layers) and distance maps take them.
func (c Config) checkSinks(s position.Scheme) error {
	if !c.Attention.Sinks {
		return nil
	}
	if c.Attention.Normaliser == Softpick {
		return fmt.Errorf("attention.sinks: a sink is a term of the softmax, not of softpick")
	}
	for l := 0; l < c.Layers; l++ {
		in := position.InLayer(s, l).Scheme
		_, stick := position.StickBreakingOf(in)
		_, forget := position.ForgetGateOf(in)
		_, cope := position.ContextPositionsOf(in)
		if stick || forget || cope {
			return fmt.Errorf("attention.sinks: not with the %s scheme of layer %d yet (stick-breaking, forget gates and contextual positions take none)", in.Name(), l)
		}
	}
	return nil
}
