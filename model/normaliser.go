package model

import (
	"fmt"

	"extrapolate/position"
)

// The normalisers the attention section's normaliser may name: what turns each query's scores
// into its weights over the keys, in every layer, whatever the position scheme.
const (
	// Softmax is the default (an empty normaliser means it too).
	Softmax = "softmax"
	// Softpick is ReLU(e^x − 1) over Σ|e^x − 1| (Zuhri et al. 2025; nn.AttentionConfig.Softpick):
	// weights that may sum to less than 1, a query free to attend to nothing.
	Softpick = "softpick"
)

// checkNormaliser refuses a normaliser it does not know.
func (a Attention) checkNormaliser() error {
	switch a.Normaliser {
	case "", Softmax, Softpick:
		return nil
	}
	return fmt.Errorf("attention.normaliser: %q, want %s or %s", a.Normaliser, Softmax, Softpick)
}

// checkNormaliser refuses softpick with a scheme that replaces the softmax in some layer itself
// (stick-breaking): each layer has one normaliser.
func (c Config) checkNormaliser(s position.Scheme) error {
	if c.Attention.Normaliser != Softpick {
		return nil
	}
	for l := 0; l < c.Layers; l++ {
		if _, ok := position.StickBreakingOf(position.InLayer(s, l).Scheme); ok {
			return fmt.Errorf("attention.normaliser: softpick replaces the softmax, as the %s scheme does in layer %d: take one", position.InLayer(s, l).Scheme.Name(), l)
		}
	}
	return nil
}
