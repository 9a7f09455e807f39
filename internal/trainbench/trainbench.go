// Package trainbench times a training step of the comparison's model with a position scheme
// given by its config: the one benchmark body of the examples that compare a scheme's paths
// (examples/logbias's graph and hand-written bias, examples/softcap's decomposed attention
// against the fused op).
package trainbench

import (
	"math/rand/v2"
	"testing"

	"gorgonia.org/tensor"

	"extrapolate/model"
	"extrapolate/position"
)

// Step times a training step (forward, backward and AdamW) of the comparison's model, width
// 64, 2 layers, 4 heads, 16 sequences of 64 tokens, in float32, with the scheme pc gives.
func Step(b *testing.B, pc position.Config) {
	const heads, n, batch = 4, 64, 16
	s, err := position.New(position.Spec{DModel: 64, Heads: heads, Layers: 2, TrainLen: n, Config: pc})
	if err != nil {
		b.Fatal(err)
	}
	m, err := model.New(model.Config{Vocab: 256, DModel: 64, Layers: 2, Heads: heads, TrainLen: n}, s, tensor.Float32, 1)
	if err != nil {
		b.Fatal(err)
	}
	g, err := m.Graph(s, batch, n, model.Options{Train: true})
	if err != nil {
		b.Fatal(err)
	}
	defer g.Close()
	opt := model.NewAdamW(m, model.Schedule{LR: 1e-3, Warmup: 1, Steps: 1 << 30}, 0.1, 1)
	rng := rand.New(rand.NewPCG(1, 1))
	for i := range g.IDs {
		g.IDs[i], g.Targets[i] = rng.IntN(256), rng.IntN(256)
	}
	grads := make([]*tensor.Dense, len(m.Params))
	b.ResetTimer()
	for range b.N {
		if _, err := g.Run(); err != nil {
			b.Fatal(err)
		}
		for i := range grads {
			grads[i] = g.Grad(i)
		}
		if _, err := opt.Update(m.Params, grads); err != nil {
			b.Fatal(err)
		}
	}
}
