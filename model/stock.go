package model

import (
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"extrapolate/model/nn/stock"
)

// stock returns the model's layers in gorgonia's stock ops (Options.StockOps): the reference the
// fused ops are tested against, and the "before" of the speed comparison. Its cross-entropy
// takes the targets one-hot, which Run fills from Targets.
func (gr *Graph) stock(m *Model, rows int) ops {
	gr.onehot = tensor.New(tensor.WithShape(rows, m.Config.Vocab), tensor.Of(m.Dtype))
	onehot := G.NewMatrix(gr.g, m.Dtype, G.WithShape(rows, m.Config.Vocab), G.WithName("onehot"), G.WithValue(gr.onehot))
	return ops{
		embed: func(ids, wte, pe *G.Node, n int, _ bool, _ []int) (*G.Node, error) {
			return stock.Embed(ids, wte, pe, n)
		},
		layerNorm:    func(x, g, b *G.Node) (*G.Node, error) { return stock.LayerNorm(x, g, b, LayerNormEps) },
		linear:       stock.Linear,
		attention:    stock.AttentionWith,
		logForget:    stock.LogForget,
		gelu:         stock.GELU,
		add:          G.Add,
		crossEntropy: func(logits, _ *G.Node) (*G.Node, error) { return stock.CrossEntropy(logits, onehot) },
	}
}
