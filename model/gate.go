package model

import (
	"fmt"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// The gates the attention section's gate may name: gated attention (Qiu et al. 2025, "G1"), a
// sigmoid gate on each layer's attention output before its output projection, computed from the
// layer's normalised input as q is. It is a stage on attention's output, written with gorgonia's
// operations, so gorgonia differentiates it: it needs no kernel of its own.
const (
	// Elementwise gives every dimension of every head's output a gate: σ(x·Wg + bg), Wg (d, d).
	Elementwise = "elementwise"
	// Headwise gives each head's output one gate: σ(x·Wg + bg), Wg (d, heads), a head's gate
	// multiplying all its dimensions.
	Headwise = "headwise"
)

// checkGate refuses a gate it does not know.
func (a Attention) checkGate() error {
	switch a.Gate {
	case "", Elementwise, Headwise:
		return nil
	}
	return fmt.Errorf("attention.gate: %q, want %s or %s", a.Gate, Elementwise, Headwise)
}

// gateWidth is the number of gates a token has in each layer: d_model, the heads, or none.
func (c Config) gateWidth() int {
	switch c.Attention.Gate {
	case Elementwise:
		return c.DModel
	case Headwise:
		return c.Heads
	}
	return 0
}

// gate multiplies a layer's attention output att, (rows, d), by its gates σ(x·wg + bg) from the
// layer's normalised input x: element by element, or each head's slice of a row by its head's
// gate when there are as many gates as heads.
func (b *builder) gate(att, x, wg, bg *G.Node, heads int) *G.Node {
	logits := b.linear(x, wg, bg)
	g := b.do(func() (*G.Node, error) { return G.Sigmoid(logits) })
	return b.do(func() (*G.Node, error) {
		rows, d := att.Shape()[0], att.Shape()[1]
		if g.Shape()[1] == d {
			return G.HadamardProd(att, g)
		}
		byHead, err := G.Reshape(att, tensor.Shape{rows, heads, d / heads})
		if err != nil {
			return nil, err
		}
		gated, err := G.BroadcastHadamardProd(byHead, g, nil, []byte{2})
		if err != nil {
			return nil, err
		}
		return G.Reshape(gated, tensor.Shape{rows, d})
	})
}
