package model

import (
	"math"
	"math/rand/v2"
	"testing"

	"gorgonia.org/tensor"
)

// TestAttentionStatsOfAGraph: a graph built with AttentionStats has one set per layer, counts
// its sequences, keeps every entropy within [0, log(i+1)] and the far mass at zero for queries
// within the training length, and gives the same loss as without.
func TestAttentionStatsOfAGraph(t *testing.T) {
	c := tiny
	c.TrainLen = tinyLen
	for _, name := range []string{"rope", "alibi", "fire"} {
		s := schemes(t, c, tinyLen)[name]
		m, err := New(c, s, tensor.Float64, 5)
		if err != nil {
			t.Fatal(err)
		}
		const n, batch = 3 * tinyLen, 2
		loss := func(stats bool) (float64, *Graph) {
			g, err := m.Graph(s, batch, n, Options{AttentionStats: stats})
			if err != nil {
				t.Fatal(err)
			}
			r := rand.New(rand.NewPCG(1, 1))
			copy(g.IDs, randomTokens(r, batch*n, c.Vocab))
			copy(g.Targets, randomTokens(r, batch*n, c.Vocab))
			l, err := g.Run()
			if err != nil {
				t.Fatal(err)
			}
			return l, g
		}
		plain, _ := loss(false)
		withStats, g := loss(true)
		if plain != withStats {
			t.Fatalf("%s: loss %v with statistics, %v without", name, withStats, plain)
		}
		if len(g.Stats) != tiny.Layers {
			t.Fatalf("%s: %d sets of statistics for %d layers", name, len(g.Stats), tiny.Layers)
		}
		for l, st := range g.Stats {
			if st.Sequences != batch || st.Far != tinyLen {
				t.Fatalf("%s layer %d: %d sequences, far %d", name, l, st.Sequences, st.Far)
			}
			for h := 0; h < tiny.Heads; h++ {
				for i := 0; i < n; i++ {
					e, f := st.Entropy[h*n+i]/batch, st.FarMass[h*n+i]/batch
					if e < -1e-12 || e > math.Log(float64(i+1))+1e-12 || f < 0 || f > 1+1e-12 || (i < tinyLen && f != 0) {
						t.Fatalf("%s layer %d head %d query %d: entropy %v, far mass %v", name, l, h, i, e, f)
					}
				}
			}
		}
	}
	s := schemes(t, tiny, tinyLen)["rope"]
	m, err := New(tiny, s, tensor.Float64, 5)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Graph(s, 1, 4, Options{AttentionStats: true}); err == nil {
		t.Error("statistics without a training length accepted")
	}
	m.Config.TrainLen = tinyLen
	if _, err := m.Graph(s, 1, 4, Options{AttentionStats: true, StockOps: true}); err == nil {
		t.Error("statistics from the stock ops accepted")
	}
}
