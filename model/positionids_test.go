package model

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"gorgonia.org/tensor"

	"extrapolate/model/nn"
	"extrapolate/position"
)

// idsVariants are the tiny model's variants (every scheme, each temperature) for a graph at
// position ids below r: the learned table given r rows, since its default has the training
// length's only.
func idsVariants(t *testing.T, r int) map[string]variant {
	out := variants(t)
	s, err := position.New(position.Spec{DModel: tiny.DModel, Heads: tiny.Heads, Layers: tiny.Layers, TrainLen: tinyLen,
		Config: position.Config{Scheme: "learned", Params: map[string]any{"max_len": r}}})
	if err != nil {
		t.Fatal(err)
	}
	out["learned"] = variant{tiny, s}
	return out
}

// trainedGraph builds a training graph of v on a model with the given seed's weights, spread
// wider than the initial 0.02 so that every path matters, with a random batch of two sequences.
func trainedGraph(t *testing.T, v variant, dt tensor.Dtype, o Options) (*Model, *Graph) {
	t.Helper()
	m, err := New(v.config, v.scheme, dt, 7)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for _, p := range m.Params {
		switch x := p.Value.Data().(type) {
		case []float64:
			for i := range x {
				x[i] += 0.3 * rng.NormFloat64()
			}
		case []float32:
			for i := range x {
				x[i] += float32(0.3 * rng.NormFloat64())
			}
		}
	}
	o.Train = true
	g, err := m.Graph(v.scheme, 2, tinyLen, o)
	if err != nil {
		t.Fatal(err)
	}
	copy(g.IDs, randomTokens(rng, len(g.IDs), v.config.Vocab))
	copy(g.Targets, randomTokens(rng, len(g.Targets), v.config.Vocab))
	return m, g
}

// TestGraphAtDefaultIDs is the golden test of position ids: a training graph built for ids and
// run at the ids 0..n−1, over the sequence's length and over twice it, computes the loss and
// every gradient of the graph without ids to the bit, in float32 as training runs, for every
// scheme and temperature. The graph without ids is the code that ran before ids existed: it
// takes none of their paths (nn's TestAttentionAtZeroIDsIsDefault checks the op alike).
func TestGraphAtDefaultIDs(t *testing.T) {
	for _, r := range []int{tinyLen, 2 * tinyLen} {
		for name, v := range idsVariants(t, r) {
			t.Run(name, func(t *testing.T) {
				m0, plain := trainedGraph(t, v, tensor.Float32, Options{})
				_, at := trainedGraph(t, v, tensor.Float32, Options{PositionRange: r})
				if plain.Positions != nil || len(at.Positions) != tinyLen || at.Positions[tinyLen-1] != tinyLen-1 {
					t.Fatalf("positions %v without ids, %v with", plain.Positions, at.Positions)
				}
				a, err := plain.Run()
				if err != nil {
					t.Fatal(err)
				}
				b, err := at.Run()
				if err != nil {
					t.Fatal(err)
				}
				if math.Float64bits(a) != math.Float64bits(b) {
					t.Fatalf("range %d: loss %.9g at ids 0..n−1, %.9g without ids", r, b, a)
				}
				for i, p := range m0.Params {
					ga, gb := nn.Values[float32](plain.Grad(i)), nn.Values[float32](at.Grad(i))
					for e := range ga {
						if math.Float32bits(ga[e]) != math.Float32bits(gb[e]) {
							t.Fatalf("range %d: gradient of %s[%d] %v at ids 0..n−1, %v without ids", r, p.Name, e, gb[e], ga[e])
						}
					}
				}
			})
		}
	}
}

// TestGradientsAtIDsMatchFiniteDifferences checks the gradient of the whole model at drawn
// ids, every weight of it, against central differences in float64, for every scheme: the
// learned table's rows and a learned bias's entries at the ids, and the rotation's rows.
func TestGradientsAtIDsMatchFiniteDifferences(t *testing.T) {
	const r = 10
	for name, v := range idsVariants(t, r) {
		t.Run(name, func(t *testing.T) {
			m, g := trainedGraph(t, v, tensor.Float64, Options{PositionRange: r})
			copy(g.Positions, []int{1, 2, 5, 6, 9})
			if _, err := g.Run(); err != nil {
				t.Fatal(err)
			}
			var grads [][]float64
			for i := range m.Params {
				grads = append(grads, append([]float64(nil), nn.Values[float64](g.Grad(i))...))
			}
			const h = 1e-6
			for i, p := range m.Params {
				w := nn.Values[float64](p.Value)
				for e := range w {
					orig := w[e]
					w[e] = orig + h
					up, _ := g.Run()
					w[e] = orig - h
					down, _ := g.Run()
					w[e] = orig
					fd := (up - down) / (2 * h)
					if rel := math.Abs(grads[i][e]-fd) / math.Max(1, math.Abs(fd)); rel > 1e-6 {
						t.Fatalf("%s[%d]: gradient %.10g, finite difference %.10g", p.Name, e, grads[i][e], fd)
					}
				}
			}
		})
	}
}

// TestIDsShiftedKeepDistances moves every id by the same amount: a scheme that sees distances
// only (RoPE, ALiBi, T5, KERPLE, and FIRE below its threshold of 512, where it divides by the
// threshold's ψ rather than the query's) computes the same loss, to rounding, and one that places
// tokens (learned, sinusoidal) or divides by ψ of the query's position (FIRE past its
// threshold) does not. That is the ids reaching each scheme as positions.
func TestIDsShiftedKeepDistances(t *testing.T) {
	const r = 10
	vs := idsVariants(t, r)
	// FIRE with a threshold of 1 divides by ψ of the query's position: not distances only.
	fire, err := position.New(position.Spec{DModel: tiny.DModel, Heads: tiny.Heads, Layers: tiny.Layers, TrainLen: tinyLen,
		Config: position.Config{Scheme: "fire", Params: map[string]any{"threshold_init": 1.0}}})
	if err != nil {
		t.Fatal(err)
	}
	vs["fire-threshold-1"] = variant{tiny, fire}
	for name, same := range map[string]bool{"rope": true, "alibi": true, "t5": true, "kerple": true, "fire": true, "learned": false, "sinusoidal": false, "fire-threshold-1": false} {
		t.Run(name, func(t *testing.T) {
			_, g := trainedGraph(t, vs[name], tensor.Float64, Options{PositionRange: r})
			loss := func(ids ...int) float64 {
				copy(g.Positions, ids)
				l, err := g.Run()
				if err != nil {
					t.Fatal(err)
				}
				return l
			}
			a, b := loss(0, 1, 3, 4, 6), loss(3, 4, 6, 7, 9)
			if near := math.Abs(a-b) <= 1e-12*math.Abs(a); near != same {
				t.Fatalf("loss %.15g at 0, 1, 3, 4, 6 and %.15g three positions on; want them the same: %v", a, b, same)
			}
			if c := loss(0, 1, 2, 3, 4); name == "rope" && math.Abs(a-c) <= 1e-12*math.Abs(a) {
				t.Fatalf("loss %.15g whatever the gaps between the ids", a)
			}
		})
	}
}

// TestGraphRefusesIDs checks the graphs that take no ids: the stock ops', a range shorter than
// the sequence, and a learned table shorter than the range (not applicable, as a length past it
// is). Evaluation graphs take ids (evalids_test.go).
func TestGraphRefusesIDs(t *testing.T) {
	v := variants(t)["rope"]
	m, err := New(v.config, v.scheme, tensor.Float32, 1)
	if err != nil {
		t.Fatal(err)
	}
	for name, o := range map[string]Options{
		"stock ops": {PositionRange: 8, Train: true, StockOps: true},
		"short":     {PositionRange: tinyLen - 1, Train: true},
	} {
		if _, err := m.Graph(v.scheme, 1, tinyLen, o); err == nil {
			t.Errorf("%s: built a graph with position ids", name)
		}
	}
	learned := variants(t)["learned"] // a table of tinyLen rows
	m, err = New(learned.config, learned.scheme, tensor.Float32, 1)
	if err != nil {
		t.Fatal(err)
	}
	_, err = m.Graph(learned.scheme, 1, tinyLen, Options{Train: true, PositionRange: tinyLen + 1})
	if !IsNotApplicable(err) || !errors.Is(err, position.ErrNotApplicable) {
		t.Fatalf("ids past the learned table: %v, want not applicable", err)
	}
}
