package model

import (
	"math"
	"testing"

	"gorgonia.org/tensor"

	"extrapolate/model/nn"
	"extrapolate/position"
)

// Evaluation graphs at position ids, each sequence at ids of its own (Options.PositionRange
// without Train).

// evalGraph builds an evaluation graph of v on m, with the tokens of the training graph tg.
func evalGraph(t *testing.T, m *Model, v variant, tg *Graph, o Options) *Graph {
	t.Helper()
	g, err := m.Graph(v.scheme, tg.Batch, tg.Len, o)
	if err != nil {
		t.Fatal(err)
	}
	copy(g.IDs, tg.IDs)
	copy(g.Targets, tg.Targets)
	return g
}

// sameFloat32 reports whether two runs' float32 values are the same to the bit. With a BLAS
// library other than package gemm's kernel, which computes each element of a product in the
// same order whatever its shape, evaluation's tiles may sum in another order than training's
// whole products: then float32 rounding of sums over a few terms, 32ε·(1+|x|), as nn's
// TestTiledEvaluationIsTrainingsForward allows.
func sameFloat32(a, b float32) bool {
	if nn.BLAS != "go-asm" {
		return math.Abs(float64(a-b)) <= 32*0x1p-23*(1+math.Abs(float64(b)))
	}
	return math.Float32bits(a) == math.Float32bits(b)
}

// run runs g and returns its loss and a copy of its logits.
func run(t *testing.T, g *Graph) (float64, []float32) {
	t.Helper()
	loss, err := g.Run()
	if err != nil {
		t.Fatal(err)
	}
	return loss, append([]float32(nil), nn.Values[float32](g.Logits())...)
}

// TestEvalGraphAtDefaultIDs is evaluation's golden test of position ids: an evaluation graph
// built for ids, every sequence at 0..n−1, over the sequence's length and over twice it,
// computes the loss and logits of the evaluation graph without ids to the bit, for every scheme
// and temperature. The graph without ids is the code that ran before ids existed.
func TestEvalGraphAtDefaultIDs(t *testing.T) {
	for _, r := range []int{tinyLen, 2 * tinyLen} {
		for name, v := range idsVariants(t, r) {
			t.Run(name, func(t *testing.T) {
				m, tg := trainedGraph(t, v, tensor.Float32, Options{})
				plain := evalGraph(t, m, v, tg, Options{})
				at := evalGraph(t, m, v, tg, Options{PositionRange: r})
				if len(at.Positions) != tg.Batch*tinyLen || at.Positions[tinyLen] != 0 || at.Positions[2*tinyLen-1] != tinyLen-1 {
					t.Fatalf("positions %v, want 0..%d in each of %d sequences", at.Positions, tinyLen-1, tg.Batch)
				}
				a, la := run(t, plain)
				b, lb := run(t, at)
				if math.Float64bits(a) != math.Float64bits(b) {
					t.Fatalf("range %d: loss %.9g at ids 0..n−1, %.9g without ids", r, b, a)
				}
				for e := range la {
					if math.Float32bits(la[e]) != math.Float32bits(lb[e]) {
						t.Fatalf("range %d: logit %d %v at ids 0..n−1, %v without ids", r, e, lb[e], la[e])
					}
				}
			})
		}
	}
}

// TestEvalAtIDsIsTrainingForward checks evaluation at drawn ids against the training graph's
// forward pass at the same ids, same weights and tokens: the training graph's ids are shared by
// its sequences, so each sequence's logits come from a training run at that sequence's ids, and
// the loss with both sequences at one draw is training's. Both draws place the tokens far from
// 0..n−1, so a graph that ignored them would fail.
func TestEvalAtIDsIsTrainingForward(t *testing.T) {
	const r = 12
	draws := [][]int{{1, 2, 5, 6, 9}, {0, 4, 7, 10, 11}}
	vs := idsVariants(t, r)
	for _, name := range []string{"rope", "alibi", "t5", "fire", "sinusoidal", "kerple", "learned", "xpos", "rope+logn"} {
		v := vs[name]
		t.Run(name, func(t *testing.T) {
			m, tg := trainedGraph(t, v, tensor.Float32, Options{PositionRange: r})
			eg := evalGraph(t, m, v, tg, Options{PositionRange: r})
			var want [][]float32
			for _, ids := range draws {
				copy(tg.Positions, ids)
				loss, logits := run(t, tg)
				want = append(want, logits)
				copy(eg.Positions, ids)
				copy(eg.Positions[tinyLen:], ids)
				if got, _ := run(t, eg); math.Float64bits(got) != math.Float64bits(loss) && (nn.BLAS == "go-asm" || !sameFloat32(float32(got), float32(loss))) {
					t.Fatalf("ids %v: loss %.9g evaluating, %.9g training", ids, got, loss)
				}
			}
			copy(eg.Positions, draws[0])
			copy(eg.Positions[tinyLen:], draws[1])
			_, got := run(t, eg)
			rows := len(got) / 2 // each sequence's logits
			for s := range draws {
				for e := s * rows; e < (s+1)*rows; e++ {
					if !sameFloat32(got[e], want[s][e]) {
						t.Fatalf("sequence %d at ids %v: logit %d %v evaluating, %v training", s, draws[s], e, got[e], want[s][e])
					}
				}
			}
		})
	}
}

// TestEvalBiasByRowAtIDs checks FIRE evaluated at ids from a range long enough that its bias is
// computed a query at a time (heads·r² values past BiasRowsAbove): the loss of the same ids in
// a short range, where the bias is made whole, to the bit. FIRE's bias at a pair of positions
// does not depend on the range.
func TestEvalBiasByRowAtIDs(t *testing.T) {
	const short, long = 40, 3000
	v := idsVariants(t, short)["fire"]
	if !BiasByRow(v.scheme, tiny.Heads, long) || BiasByRow(v.scheme, tiny.Heads, short) {
		t.Fatalf("FIRE by row at %d and %d positions: %v and %v, want only the first", long, short, BiasByRow(v.scheme, tiny.Heads, long), BiasByRow(v.scheme, tiny.Heads, short))
	}
	m, tg := trainedGraph(t, v, tensor.Float32, Options{})
	var loss []float64
	for _, r := range []int{short, long} {
		g := evalGraph(t, m, v, tg, Options{PositionRange: r})
		copy(g.Positions, []int{1, 4, 9, 20, 39, 0, 2, 3, 30, 31})
		l, _ := run(t, g)
		loss = append(loss, l)
	}
	if math.Float64bits(loss[0]) != math.Float64bits(loss[1]) {
		t.Fatalf("loss %.9g with the bias by row, %.9g made whole", loss[1], loss[0])
	}
}

// TestEvalGraphAtIDsRefusesMap checks that a distance map, whose spans and alternate positions
// are of tokens 0..n−1, makes an evaluation graph at ids not applicable, as a length past a
// learned table is.
func TestEvalGraphAtIDsRefusesMap(t *testing.T) {
	s := mapped(t, position.Config{Scheme: "rope", DistanceMap: &position.DistanceMapConfig{Type: "rerope", Params: map[string]any{"window": 2}}}, tinyLen)
	m, err := New(tiny, s, tensor.Float32, 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Graph(s, 1, tinyLen, Options{}); err != nil {
		t.Fatalf("without ids: %v", err)
	}
	if _, err := m.Graph(s, 1, tinyLen, Options{PositionRange: 2 * tinyLen}); !IsNotApplicable(err) {
		t.Fatalf("a distance map at ids: %v, want not applicable", err)
	}
}
