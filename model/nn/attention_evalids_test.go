package nn_test

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"extrapolate/internal/gradcheck"
	"extrapolate/model/nn"
)

// Evaluation at ids drawn for each window: the op given Batch·SeqLen ids, sequence b's at
// [b·SeqLen:].

// drawIDs returns n sorted distinct positions of [0, r), from rng.
func drawIDs(rng *rand.Rand, n, r int) []int {
	ids := rng.Perm(r)[:n]
	slices.Sort(ids)
	return ids
}

// sequenceOf cuts sequence b of n tokens out of attention's inputs: its rows of q, k and v, the
// bias and the query scale whole.
func sequenceOf(in []gradcheck.Input, b, n int) []gradcheck.Input {
	out := constants(in)
	for i := range 3 {
		x := in[i].Value
		d := x.Shape()[1]
		rows := append([]float64(nil), x.Data().([]float64)[b*n*d:(b+1)*n*d]...)
		out[i] = gradcheck.Var(in[i].Name, tensor.New(tensor.WithShape(n, d), tensor.WithBacking(rows)))
	}
	return out
}

// evalOutput runs the op as evaluation does (nothing differentiated) and returns its output.
func evalOutput(t *testing.T, in []gradcheck.Input, c attentionCase, cfg nn.AttentionConfig) []float64 {
	return runAt(t, in, c, cfg, false)
}

// keptOutput runs the op as training does (differentiated: the kept path) and returns its
// output.
func keptOutput(t *testing.T, in []gradcheck.Input, c attentionCase, cfg nn.AttentionConfig) []float64 {
	return runAt(t, in, c, cfg, true)
}

// runAt runs the op once on the inputs' values, with the gradient of its sum taken when train
// is set, and returns its output: the float64 runAttention.
func runAt(t *testing.T, in []gradcheck.Input, c attentionCase, cfg nn.AttentionConfig, train bool) []float64 {
	t.Helper()
	g := G.NewGraph()
	var x []*G.Node
	for _, v := range in {
		x = append(x, G.NewTensor(g, tensor.Float64, v.Value.Dims(), G.WithShape(v.Value.Shape()...), G.WithName(v.Name), G.WithValue(v.Value.Clone())))
	}
	out, err := attentionOf(c, cfg)(g, x)
	if err != nil {
		t.Fatal(err)
	}
	if train {
		if _, err := G.Grad(G.Must(G.Sum(out)), x[0]); err != nil {
			t.Fatal(err)
		}
	}
	vm := G.NewTapeMachine(g)
	defer vm.Close()
	if err := vm.RunAll(); err != nil {
		t.Fatal(err)
	}
	return append([]float64(nil), out.Value().Data().([]float64)...)
}

// TestEvaluationAtIDsOfEachSequence checks evaluation with ids of its own for each sequence of a
// batch against training's kept pass run on each sequence alone at its ids, for every way of
// calling attention at ids: each sequence's rows are computed at its own ids, and a swap of the
// two draws changes them.
func TestEvaluationAtIDsOfEachSequence(t *testing.T) {
	const batch, n, heads, d, r = 2, 7, 2, 12, 20
	rng := rand.New(rand.NewPCG(3, 21))
	a, b := drawIDs(rng, n, r), drawIDs(rng, n, r)
	for name, c := range idsCases(rng, r, 3) {
		t.Run(name, func(t *testing.T) {
			in := c.inputsOver(rng, batch, n, r, heads, d)
			got := evalOutput(t, in, c, c.configAt(batch, n, heads, append(slices.Clone(a), b...), r))
			swapped := evalOutput(t, in, c, c.configAt(batch, n, heads, append(slices.Clone(b), a...), r))
			differs := false
			for s, ids := range [][]int{a, b} {
				want := keptOutput(t, sequenceOf(in, s, n), c, c.configAt(1, n, heads, ids, r))
				off := s * len(want)
				for e, y := range want {
					if !near(got[off+e], y) {
						t.Fatalf("sequence %d, output[%d]: %.15g at its ids in a batch, %.15g alone", s, e, got[off+e], y)
					}
					differs = differs || !near(swapped[off+e], y)
				}
			}
			if !differs {
				t.Fatal("the same output with the two sequences' ids swapped")
			}
		})
	}
}

// TestBiasByRowAtIDs checks a per-query bias given a query at a time (FIRE's at long ranges)
// at ids of each sequence: the same output, bit for bit, as the bias given whole over the range.
func TestBiasByRowAtIDs(t *testing.T) {
	const batch, n, heads, d, r = 2, 9, 2, 8, 30
	rng := rand.New(rand.NewPCG(3, 22))
	ids := append(drawIDs(rng, n, r), drawIDs(rng, n, r)...)
	whole := attentionCase{form: nn.PerQuery}
	in := whole.inputsOver(rng, batch, n, r, heads, d)
	want := evalOutput(t, in, whole, whole.configAt(batch, n, heads, ids, r))
	bias := in[3].Value.Data().([]float64)
	byRow := attentionCase{}
	cfg := byRow.configAt(batch, n, heads, ids, r)
	cfg.Bias, cfg.BiasRow = nn.ByRow, func(h, i, j0 int, dst []float64) { copy(dst, bias[(h*r+i)*r+j0:]) }
	got := evalOutput(t, in[:3], byRow, cfg)
	for e := range want {
		if math.Float64bits(got[e]) != math.Float64bits(want[e]) {
			t.Fatalf("output[%d]: %v by row, %v given whole", e, got[e], want[e])
		}
	}
}

// TestTiledAtIDsIsKeptLong checks evaluation at ids on a window whose queries' keys span two
// tiles, so that the online softmax runs, against training's kept pass at the same ids, in
// float64: a rotation and a bias by distance over a range twice the window, each looked up at
// the ids. The two differ in the order of their sums only: float64 rounding.
func TestTiledAtIDsIsKeptLong(t *testing.T) {
	if testing.Short() {
		t.Skip("attends over 2.2k positions")
	}
	const n, heads, d = 2048 + 150, 2, 8
	const r = 2 * n
	rng := rand.New(rand.NewPCG(3, 23))
	ids := drawIDs(rng, n, r)
	c := attentionCase{pos: randomPositions(rng, r, 2, false), form: nn.ByDistance, scale: true}
	in := c.inputsOver(rng, 1, n, r, heads, d)
	// A bias that falls with distance in head 0 and grows with it in head 1, as
	// TestTiledEvaluationOnline's, so that the running maximum both moves and stays.
	bias := in[3].Value.Data().([]float64)
	for h := 0; h < heads; h++ {
		for δ := 0; δ < r; δ++ {
			bias[h*r+δ] = float64(2*h-1) * float64(δ) / 40
		}
	}
	cfg := c.configAt(1, n, heads, ids, r)
	got, want := evalOutput(t, in, c, cfg), keptOutput(t, in, c, cfg)
	for e := range want {
		if !near(got[e], want[e]) {
			t.Fatalf("output[%d] (query %d): %.15g evaluating, %.15g training", e, e/d, got[e], want[e])
		}
	}
}

// TestAttentionRefusesIDsOfEachSequenceInTraining checks that the backward pass, which sums a
// bias's gradient by the positions every sequence shares, refuses ids of each sequence.
func TestAttentionRefusesIDsOfEachSequenceInTraining(t *testing.T) {
	const batch, n, heads, d, r = 2, 3, 1, 4, 6
	rng := rand.New(rand.NewPCG(3, 24))
	c := attentionCase{form: nn.ByDistance, learn: true}
	h := gradcheck.New(t, c.inputsOver(rng, batch, n, r, heads, d), attentionOf(c, c.configAt(batch, n, heads, []int{0, 2, 5, 1, 3, 4}, r)))
	if err := h.RunErr(); err == nil {
		t.Fatal("trained with ids of each sequence")
	}
}
