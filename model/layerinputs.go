package model

import (
	"fmt"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// LayerInputs are what one layer's attention read in a graph's last run, as float64: what a
// reader needs to show what a scheme that reads the content (FoX's gates, CoPE's counts,
// stick-breaking's weights) made of a text, from the model's own forward pass rather than a
// second implementation of it.
type LayerInputs struct {
	// X is the layer's input after its first LayerNorm, and Q and K the queries and keys made
	// from it, before any rotation: (Batch·Len, DModel) each, row b·Len+t for token t of
	// sequence b, the heads side by side along a row.
	X, Q, K []float64
	// LogForget holds FoX's log forget gates, (Batch·Len, Heads); nil for a layer without.
	LogForget []float64
	// Scale holds the attention temperature's factor of each head and query, (Heads, Len), which
	// multiplies the scores; nil without a temperature.
	Scale []float64
}

// layerNodes are the nodes of one layer's LayerInputs; logForget and scale may be nil.
type layerNodes struct {
	x, q, k, logForget, scale *G.Node
}

// LayerInputs returns what layer l's attention read in the graph's last run. Every fused op
// owns its output buffer (model/nn), so the values are those of this run, copied. A graph of
// stock ops, whose nodes may share buffers, has none.
func (gr *Graph) LayerInputs(l int) (LayerInputs, error) {
	if gr.layers == nil {
		return LayerInputs{}, fmt.Errorf("model: a graph of stock ops keeps no layer inputs")
	}
	if l < 0 || l >= len(gr.layers) {
		return LayerInputs{}, fmt.Errorf("model: layer %d of %d", l, len(gr.layers))
	}
	n := gr.layers[l]
	var in LayerInputs
	for _, v := range []struct {
		node *G.Node
		dst  *[]float64
	}{{n.x, &in.X}, {n.q, &in.Q}, {n.k, &in.K}, {n.logForget, &in.LogForget}, {n.scale, &in.Scale}} {
		if v.node == nil {
			continue
		}
		t, ok := v.node.Value().(*tensor.Dense)
		if !ok || t == nil {
			return LayerInputs{}, fmt.Errorf("model: layer %d's %s has no value: run the graph first", l, v.node.Name())
		}
		*v.dst = float64s(t)
	}
	return in, nil
}
