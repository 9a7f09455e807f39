package model

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"extrapolate/position"
)

// TestRotationAtMatchesTable checks that tabulating a rotation at the positions themselves gives
// the scheme's own tables to the bit, for every scheme that rotates queries and keys alike: the
// alternate tables of a distance map are then the rotation at other positions, nothing else.
func TestRotationAtMatchesTable(t *testing.T) {
	const n = 37
	for name, s := range schemes(t, tiny, tinyLen) {
		for l := 0; l < tiny.Layers; l++ {
			rot, err := position.RotationAt(position.InLayer(s, l).Scheme, n)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if rot == nil || rot.KeyCos != nil {
				continue
			}
			cos, sin := rotationAt(rot, func(i int) float64 { return float64(i) }, n)
			for i := range cos {
				if cos[i] != rot.Cos[i] || sin[i] != rot.Sin[i] {
					t.Fatalf("%s layer %d: value %d: (%v, %v), the scheme's (%v, %v)", name, l, i, cos[i], sin[i], rot.Cos[i], rot.Sin[i])
				}
			}
		}
	}
}

// mapped builds a scheme of tiny's shape from a position config.
func mapped(t *testing.T, pc position.Config, trainLen int) position.Scheme {
	t.Helper()
	s, err := position.New(position.Spec{DModel: tiny.DModel, Heads: tiny.Heads, Layers: tiny.Layers, TrainLen: trainLen, Config: pc})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// layerConfigs returns what each layer's attention is given for n positions.
func layerConfigs(t *testing.T, m *Model, s position.Scheme, n int, o Options) positions {
	t.Helper()
	g := G.NewGraph()
	w := nodes{}
	for _, p := range m.Params {
		w[p] = G.NewTensor(g, m.Dtype, p.Value.Dims(), G.WithShape(p.Value.Shape()...), G.WithName(p.Name), G.WithValue(p.Value))
	}
	p, err := m.positions(g, s, w, 1, n, o, nil)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestDistanceMapReachesAttention checks that an evaluation graph gives attention ReRoPE's
// spans and its tables at the alternate positions (every far query at the window, every far key
// at 0), that a training graph attends as trained, and that the stock ops refuse a map.
func TestDistanceMapReachesAttention(t *testing.T) {
	const n, w = 20, 3
	s := mapped(t, position.Config{Scheme: "rope", DistanceMap: &position.DistanceMapConfig{Type: "rerope", Params: map[string]any{"window": w}}}, 8)
	m, err := New(tiny, s, tensor.Float64, 3)
	if err != nil {
		t.Fatal(err)
	}
	rot, err := position.RotationAt(s, n)
	if err != nil {
		t.Fatal(err)
	}
	pairs := len(rot.InvFreq)
	for l, a := range layerConfigs(t, m, s, n, Options{}).layers {
		r := a.config.Remap
		if r == nil {
			t.Fatalf("layer %d: no remap in an evaluation graph", l)
		}
		for i := 0; i < n; i++ {
			for p := 0; p < pairs; p++ {
				q, k := r.AltCos[i*pairs+p], r.AltKeyCos[i*pairs+p]
				if q != rot.Cos[w*pairs+p] || r.AltSin[i*pairs+p] != rot.Sin[w*pairs+p] || k != 1 || r.AltKeySin[i*pairs+p] != 0 {
					t.Fatalf("layer %d, position %d, pair %d: query at (%v, %v), key at (%v, %v); want the rotation at %d and at 0", l, i, p, q, r.AltSin[i*pairs+p], k, r.AltKeySin[i*pairs+p], w)
				}
			}
		}
		if got := r.Spans(n-1, nil); len(got) != 2 || !got[0].Alt || got[0].To != n-w || got[1].Alt {
			t.Errorf("layer %d: spans of the last query %+v, want the far keys Alt up to %d, then the window", l, got, n-w)
		}
	}
	for l, a := range layerConfigs(t, m, s, n, Options{Train: true}).layers {
		if a.config.Remap != nil {
			t.Errorf("layer %d: a training graph with a distance map", l)
		}
	}
	if _, err := m.Graph(s, 1, n, Options{StockOps: true}); err == nil || !strings.Contains(err.Error(), "rerope") {
		t.Errorf("stock ops with a distance map: %v, want an error naming it", err)
	}
}

// TestDistanceMapActs checks an evaluation graph's loss through ReRoPE and Dual Chunk Attention:
// equal (to rounding) to plain RoPE's when the window or chunk holds every key, different when
// it does not.
func TestDistanceMapActs(t *testing.T) {
	const n = 24
	plain := mapped(t, position.Config{Scheme: "rope"}, 8)
	m, err := New(tiny, plain, tensor.Float64, 5)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	ids, targets := randomTokens(rng, n, tiny.Vocab), randomTokens(rng, n, tiny.Vocab)
	loss := func(s position.Scheme) float64 {
		g, err := m.Graph(s, 1, n, Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer g.Close()
		copy(g.IDs, ids)
		copy(g.Targets, targets)
		v, err := g.Run()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	rerope := func(w int) position.Scheme {
		return mapped(t, position.Config{Scheme: "rope", DistanceMap: &position.DistanceMapConfig{Type: "rerope", Params: map[string]any{"window": w}}}, 8)
	}
	base := loss(plain)
	if got := loss(rerope(n)); math.Abs(got-base) > 1e-12 {
		t.Errorf("ReRoPE with a window of every key: loss %v, plain RoPE %v", got, base)
	}
	// Rounding moves the loss by about 1e-15; the untrained model's near-uniform attention by
	// little more than 1e-7.
	if got := loss(rerope(2)); math.Abs(got-base) < 1e-9 {
		t.Errorf("ReRoPE with a window of 2: loss %v, the same as plain RoPE's %v", got, base)
	}
	// Dual Chunk Attention with a chunk of 28 keys (30 − 2) holds the 24 positions in one
	// chunk, whose distances are the true ones; with chunks of 8 keys it moves the far ones.
	dca := func(size, local int) position.Scheme {
		return mapped(t, position.Config{Scheme: "rope", DistanceMap: &position.DistanceMapConfig{Type: "dual_chunk", Params: map[string]any{"chunk_size": size, "local_window": local}}}, 8)
	}
	if got := loss(dca(30, 2)); math.Abs(got-base) > 1e-12 {
		t.Errorf("Dual Chunk Attention in one chunk: loss %v, plain RoPE %v", got, base)
	}
	if got := loss(dca(10, 2)); math.Abs(got-base) < 1e-9 {
		t.Errorf("Dual Chunk Attention in chunks of 8: loss %v, the same as plain RoPE's %v", got, base)
	}
}

// TestWindowReachesEachLayer checks that a mix's windowed slot windows its layers only, in
// training and evaluation graphs.
func TestWindowReachesEachLayer(t *testing.T) {
	s := mapped(t, position.Config{Scheme: "mix", Params: map[string]any{"layers": []any{map[string]any{"scheme": "rope", "window": 4}, "nope"}}}, 8)
	m, err := New(tiny, s, tensor.Float64, 3)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range []Options{{}, {Train: true}} {
		layers := layerConfigs(t, m, s, 16, o).layers
		if layers[0].config.Window != 4 || layers[1].config.Window != 0 {
			t.Errorf("train %v: windows %d and %d, want 4 and 0", o.Train, layers[0].config.Window, layers[1].config.Window)
		}
	}
}
