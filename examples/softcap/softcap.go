// Package softcap is an attention stage that lives outside package position and has no fused
// kernel: Gemma 2's attention logit soft-capping, each score s replaced by c·tanh(s/c) before
// the causal mask (Hugging Face's modeling_gemma2.py, eager_attention_forward: the scores
// divided by attn_logit_softcapping, tanh, times it again, then the mask added; Gemma 2's
// config sets the cap to 50). It writes the stage's forward pass alone, in gorgonia's
// operations (position.GraphScorer): the model runs the attention of its layers on the stock
// ops, the decomposed attention, and gorgonia differentiates it. With learn: true each head's
// cap is a weight of its own, started at cap and trained with the model (an ablation of this
// package, not Gemma's setting), and gorgonia's gradient reaches it too.
//
// It adds no position information: position: {scheme: softcap} is NoPE with capped scores.
// Importing the package registers it; a line in plugins/plugins.go's import block does so in
// every command:
//
//	_ "extrapolate/examples/softcap"
package softcap

import (
	"fmt"
	"math"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"extrapolate/position"
)

// SoftCap replaces each score s by Cap·tanh(s/Cap), a cap per head when Learn.
type SoftCap struct {
	Heads int
	Cap   float64
	Learn bool
}

// DefaultCap is Gemma 2's attn_logit_softcapping.
const DefaultCap = 50

func init() {
	position.Register("softcap", func(s position.Spec) (position.Scheme, error) {
		p := struct {
			Cap   float64 `yaml:"cap"`
			Learn bool    `yaml:"learn"`
		}{Cap: DefaultCap}
		if err := s.Config.Decode(&p); err != nil {
			return nil, err
		}
		if !(p.Cap > 0) || math.IsInf(p.Cap, 0) {
			return nil, fmt.Errorf("position.cap: %g, want a positive number", p.Cap)
		}
		return SoftCap{Heads: s.Heads, Cap: p.Cap, Learn: p.Learn}, nil
	})
}

// Name is softcap.
func (SoftCap) Name() string { return "softcap" }

// Weights is each head's cap when Learn, shared by the layers; none otherwise.
func (c SoftCap) Weights() []position.Weight {
	if !c.Learn {
		return nil
	}
	init := make([]float64, c.Heads)
	for h := range init {
		init[h] = c.Cap
	}
	return []position.Weight{{Name: "softcap.cap", Dims: []int{c.Heads}, Init: init}}
}

// GraphScores is c_h·tanh(s/c_h) for every score s of head h, written as its forward pass
// alone: the caps spread to every row of the scores, (batch·heads, n·n), by two products with
// constants, then elementwise. Gorgonia differentiates it.
func (c SoftCap) GraphScores(g *G.ExprGraph, w []*G.Node, scores *G.Node, _, heads, n int) (*G.Node, error) {
	dt, rows := scores.Dtype(), scores.Shape()[0]
	var caps *G.Node // (heads, 1)
	if c.Learn {
		var err error
		if caps, err = G.Reshape(w[0], tensor.Shape{heads, 1}); err != nil {
			return nil, err
		}
	} else {
		fixed := make([]float64, heads)
		for h := range fixed {
			fixed[h] = c.Cap
		}
		caps = position.GraphConstant(g, dt, "softcap.cap", fixed, heads, 1)
	}
	// Row r = b·heads + h of the scores is head h's: spread[h][r] = 1.
	spread := make([]float64, heads*rows)
	for r := range rows {
		spread[(r%heads)*rows+r] = 1
	}
	perRow, err := G.Mul(G.Must(G.Transpose(position.GraphConstant(g, dt, fmt.Sprintf("softcap.spread%d", rows), spread, heads, rows))), caps)
	if err != nil {
		return nil, err
	}
	ones := make([]float64, n*n)
	for i := range ones {
		ones[i] = 1
	}
	full, err := G.Mul(perRow, position.GraphConstant(g, dt, fmt.Sprintf("softcap.ones%d", n), ones, 1, n*n))
	if err != nil {
		return nil, err
	}
	full, err = G.Reshape(full, tensor.Shape{rows, n, n})
	if err != nil {
		return nil, err
	}
	t, err := G.Tanh(G.Must(G.HadamardDiv(scores, full)))
	if err != nil {
		return nil, err
	}
	return G.HadamardProd(t, full)
}
