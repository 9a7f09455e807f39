package model

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"gorgonia.org/tensor"

	"extrapolate/position"
)

// Shapes of the speed comparison with PyTorch's reference script (bench/torch_ref.py):
// config A and config B, with its 96-token vocabulary and learned positions.
var benchConfigs = []struct {
	name          string
	c             Config
	seqLen, batch int
}{
	{"A", Config{DModel: 64, Layers: 2, Heads: 4, Vocab: 96}, 64, 16},
	{"B", Config{DModel: 128, Layers: 4, Heads: 4, Vocab: 96}, 128, 16},
	{"C", Config{DModel: 256, Layers: 4, Heads: 8, Vocab: 96}, 256, 8},
}

func benchModel(b *testing.B, c Config, scheme string, trainLen int) (*Model, position.Scheme) {
	s, err := position.New(position.Spec{DModel: c.DModel, Heads: c.Heads, Layers: c.Layers, TrainLen: trainLen, Config: position.Config{Scheme: scheme}})
	if err != nil {
		b.Fatal(err)
	}
	m, err := New(c, s, tensor.Float32, 1234)
	if err != nil {
		b.Fatal(err)
	}
	return m, s
}

func fillRandom(g *Graph, vocab int) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range g.IDs {
		g.IDs[i], g.Targets[i] = rng.IntN(vocab), rng.IntN(vocab)
	}
}

// trainStep returns one training step of m on its graph g: a forward and backward pass and an
// AdamW update at a constant learning rate.
func trainStep(b *testing.B, m *Model, g *Graph) func() {
	opt := NewAdamW(m, Schedule{LR: 1e-3, MinLR: 1e-3, Warmup: 1, Steps: 1 << 30}, 0, 0)
	gs := make([]*tensor.Dense, len(m.Params))
	return func() {
		if _, err := g.Run(); err != nil {
			b.Fatal(err)
		}
		for i := range gs {
			gs[i] = g.Grad(i)
		}
		opt.Update(m.Params, gs)
	}
}

// BenchmarkTrainStep is one forward and backward pass and one AdamW update.
func BenchmarkTrainStep(b *testing.B) {
	for _, bc := range benchConfigs {
		for _, stockOps := range []bool{false, true} {
			name := bc.name + "/fused"
			if stockOps {
				name = bc.name + "/stock-ops"
			}
			b.Run(name, func(b *testing.B) {
				m, s := benchModel(b, bc.c, "learned", bc.seqLen)
				g, err := m.Graph(s, bc.batch, bc.seqLen, Options{Train: true, StockOps: stockOps})
				if err != nil {
					b.Fatal(err)
				}
				fillRandom(g, bc.c.Vocab)
				step := trainStep(b, m, g)
				step() // the first run allocates the buffers
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					step()
				}
				b.ReportMetric(float64(bc.batch*bc.seqLen)*float64(b.N)/b.Elapsed().Seconds(), "tokens/s")
			})
		}
	}
}

// BenchmarkEval is a forward pass at the training length and at 16 times it.
func BenchmarkEval(b *testing.B) {
	for _, bc := range benchConfigs {
		for _, mult := range []int{1, 16} {
			b.Run(fmt.Sprintf("%s/%dx", bc.name, mult), func(b *testing.B) {
				m, s := benchModel(b, bc.c, "rope", bc.seqLen)
				n := bc.seqLen * mult
				batch := max(1, bc.batch/mult)
				g, err := m.Graph(s, batch, n, Options{})
				if err != nil {
					b.Fatal(err)
				}
				fillRandom(g, bc.c.Vocab)
				g.Run()
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if _, err := g.Run(); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(batch*n)*float64(b.N)/b.Elapsed().Seconds(), "tokens/s")
			})
		}
	}
}

// BenchmarkAttentionStages is BenchmarkTrainStep's config A with RoPE, plain and with each
// attention stage the attention section adds (softpick in place of the softmax, the gate on the
// output, element-wise and head-wise): each one's cost over the plain step.
func BenchmarkAttentionStages(b *testing.B) {
	bc := benchConfigs[0]
	for _, a := range []Attention{{}, {Normaliser: Softpick}, {Gate: Elementwise}, {Gate: Headwise}} {
		name := "plain"
		if a.Normaliser != "" {
			name = a.Normaliser
		} else if a.Gate != "" {
			name = "gate_" + a.Gate
		}
		b.Run(name, func(b *testing.B) {
			c := bc.c
			c.Attention = a
			m, s := benchModel(b, c, "rope", bc.seqLen)
			g, err := m.Graph(s, bc.batch, bc.seqLen, Options{Train: true})
			if err != nil {
				b.Fatal(err)
			}
			fillRandom(g, c.Vocab)
			step := trainStep(b, m, g)
			step() // the first run allocates the buffers
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				step()
			}
		})
	}
}
