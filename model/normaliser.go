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

// CheckScheme refuses what the attention section cannot be combined with in a model of the
// scheme s (checkNormaliser, checkSinks), naming the field: a config calls it when it is
// resolved, New and Shapes again.
func (c Config) CheckScheme(s position.Scheme) error {
	if err := c.checkOwnNormaliser(s); err != nil {
		return err
	}
	if err := c.checkNormaliser(s); err != nil {
		return err
	}
	return c.checkSinks(s)
}

// checkOwnNormaliser refuses softpick and sinks with a scheme whose normaliser replaces the
// softmax in some layer (position.GraphNormaliser): each layer has one normaliser.
func (c Config) checkOwnNormaliser(s position.Scheme) error {
	for l := 0; l < c.Layers; l++ {
		in := position.InLayer(s, l).Scheme
		switch {
		case !position.NormalisesItself(in):
		case c.Attention.Normaliser == Softpick:
			return fmt.Errorf("attention.normaliser: softpick replaces the softmax, as the %s scheme's own normaliser does in layer %d: take one", in.Name(), l)
		case c.Attention.Sinks:
			return fmt.Errorf("attention.sinks: a sink is a term of the softmax, which the %s scheme replaces with its own normaliser in layer %d", in.Name(), l)
		}
	}
	return nil
}

// checkNormaliser refuses softpick with a scheme that replaces the softmax in some layer itself
// (stick-breaking): each layer has one normaliser; and, as the
// attention op does, with forget gates and contextual positions, which it takes none of yet.
// Windows and distance maps take the softmax's masked path, which folds softpick's sums too.
func (c Config) checkNormaliser(s position.Scheme) error {
	if c.Attention.Normaliser != Softpick {
		return nil
	}
	for l := 0; l < c.Layers; l++ {
		in := position.InLayer(s, l).Scheme
		if _, ok := position.StickBreakingOf(in); ok {
			return fmt.Errorf("attention.normaliser: softpick replaces the softmax, as the %s scheme does in layer %d: take one", in.Name(), l)
		}
		_, forget := position.ForgetGateOf(in)
		_, cope := position.ContextPositionsOf(in)
		if forget || cope {
			return fmt.Errorf("attention.normaliser: softpick not with the %s scheme of layer %d yet (forget gates and contextual positions take none)", in.Name(), l)
		}
	}
	return nil
}
