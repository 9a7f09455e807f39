package nn_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	G "gorgonia.org/gorgonia"

	"extrapolate/internal/gradcheck"
	"extrapolate/model/nn"
	"extrapolate/model/nn/stock"
)

// stickInputs are q, k and v of one sequence whose scores are z, (n, n), with n ≤ hd: k_j the
// j-th unit vector and q_i = √hd·z_i, so that q_i·k_j/√hd = z_ij; and v_j the j-th unit vector,
// so that row i of the output is the weights of query i. Every head gets the same.
func stickInputs(z [][]float64, heads, hd int) (q, k, v []float64) {
	n, d := len(z), heads*hd
	q, k, v = make([]float64, n*d), make([]float64, n*d), make([]float64, n*d)
	for i := range n {
		for h := range heads {
			for j := range n {
				q[i*d+h*hd+j] = math.Sqrt(float64(hd)) * z[i][j]
			}
			k[i*d+h*hd+i], v[i*d+h*hd+i] = 1, 1
		}
	}
	return q, k, v
}

// TestStickGolden checks the weights on four tokens whose β = σ(z) are set by hand, against the
// product A_ij = β_ij·Π(1−β_ik) over the keys k between j and the query, written out. The logits
// are ±log 3 and ±log 4 (β = ¾, ¼, ⅘, ⅕) and 0 (β = ½); entries no query attends to hold 9, which
// must count for nothing. Without attend_current (the reference model's), over j < k < i:
//
//	row 0: no key                      → 0
//	row 1: β_10 = ¾                    → (¾)
//	row 2: β = (½, ¼)                  → (½·¾, ¼)             = (⅜, ¼)
//	row 3: β = (⅘, ½, ¾)               → (⅘·½·¼, ½·¼, ¾)     = (1/10, ⅛, ¾)
//
// and with it, over j < k ≤ i, the diagonal β_ii = (¼, ½, ⅘, ½):
//
//	row 0: (¼)
//	row 1: (¾·½, ½)                    = (⅜, ½)
//	row 2: (½·¾·⅕, ¼·⅕, ⅘)             = (3/40, 1/20, ⅘)
//	row 3: (⅘·½·¼·½, ½·¼·½, ¾·½, ½)    = (1/20, 1/16, ⅜, ½)
func TestStickGolden(t *testing.T) {
	const n, heads, hd = 4, 2, 4
	l3, l4 := math.Log(3), math.Log(4)
	cases := []struct {
		current bool
		z, want [][]float64
	}{
		{false,
			[][]float64{{9, 9, 9, 9}, {l3, 9, 9, 9}, {0, -l3, 9, 9}, {l4, 0, l3, 9}},
			[][]float64{{0, 0, 0, 0}, {3. / 4, 0, 0, 0}, {3. / 8, 1. / 4, 0, 0}, {1. / 10, 1. / 8, 3. / 4, 0}}},
		{true,
			[][]float64{{-l3, 9, 9, 9}, {l3, 0, 9, 9}, {0, -l3, l4, 9}, {l4, 0, l3, 0}},
			[][]float64{{1. / 4, 0, 0, 0}, {3. / 8, 1. / 2, 0, 0}, {3. / 40, 1. / 20, 4. / 5, 0}, {1. / 20, 1. / 16, 3. / 8, 1. / 2}}},
	}
	for _, c := range cases {
		q, k, v := stickInputs(c.z, heads, hd)
		cfg := nn.AttentionConfig{Batch: 1, SeqLen: n, Heads: heads, StickBreaking: true, AttendCurrent: c.current}
		for _, train := range []bool{true, false} {
			got, _, err := runOp([5][]float64{q, k, v}, cfg, heads*hd, 2, train)
			if err != nil {
				t.Fatal(err)
			}
			got32, _ := runAttention(t, attnInputs{q: to32(q), k: to32(k), v: to32(v)}, cfg, heads*hd, train)
			for h := range heads {
				for i := range n {
					for j := range n {
						w, x := c.want[i][j], i*heads*hd+h*hd+j
						if g := got[x]; math.Abs(g-w) > 1e-15 {
							t.Errorf("attend_current %v, training %v: head %d A[%d][%d] = %v, want %v", c.current, train, h, i, j, g, w)
						}
						if g := float64(got32[x]); math.Abs(g-w) > 1e-7 {
							t.Errorf("float32, attend_current %v, training %v: head %d A[%d][%d] = %v, want %v", c.current, train, h, i, j, g, w)
						}
					}
				}
			}
		}
	}
}

// stickRuns calls run for every attention case of the gradient checks but forget gates and CoPE, with stick-breaking,
// with and without attend_current, and with and without a window.
func stickRuns(t *testing.T, rng *rand.Rand, batch, seqLen, heads, pairs, window int, run func(t *testing.T, c attentionCase, cfg nn.AttentionConfig)) {
	for name, c := range inOrder(attentionCases(rng, seqLen, pairs)) {
		if c.forget || c.cope > 0 {
			continue // refused (TestStickRefuses)
		}
		for _, current := range []bool{false, true} {
			for _, w := range []int{0, window} {
				cfg := c.config(batch, seqLen, heads)
				cfg.StickBreaking, cfg.AttendCurrent, cfg.Window = true, current, w
				t.Run(fmt.Sprintf("%s/attend_current=%v/window=%d", name, current, w), func(t *testing.T) { run(t, c, cfg) })
			}
		}
	}
}

// TestStickGradient checks the gradients of stick-breaking attention against finite differences
// in float64, with every input attention takes, with and without attend_current, and with a
// window of 3 keys over sequences of 5.
func TestStickGradient(t *testing.T) {
	const batch, seqLen, heads, d = 2, 5, 2, 12
	rng := rand.New(rand.NewPCG(4, 8))
	stickRuns(t, rng, batch, seqLen, heads, 3, 3, func(t *testing.T, c attentionCase, cfg nn.AttentionConfig) {
		// Scores of spread 2 put β near 0 and 1 too, where the product bites.
		in := c.inputs(rng, batch, seqLen, heads, d)
		for _, x := range in[:2] {
			for i := range x.Value.Data().([]float64) {
				x.Value.Data().([]float64)[i] *= 2
			}
		}
		gradcheck.Check(t, in, func(g *G.ExprGraph, x []*G.Node) (*G.Node, error) {
			return nn.AttentionWith(x[0], x[1], x[2], c.extra(x), cfg)
		})
	})
}

// TestStickMatchesStockOps checks values and gradients against stick-breaking written with
// gorgonia's stock ops as the reference's naive sb_ref writes it (stock.AttentionWith).
func TestStickMatchesStockOps(t *testing.T) {
	const batch, seqLen, heads, d = 2, 4, 2, 8
	rng := rand.New(rand.NewPCG(5, 6))
	stickRuns(t, rng, batch, seqLen, heads, 2, 2, func(t *testing.T, c attentionCase, cfg nn.AttentionConfig) {
		gradcheck.Same(t, c.inputs(rng, batch, seqLen, heads, d),
			func(g *G.ExprGraph, x []*G.Node) (*G.Node, error) {
				return nn.AttentionWith(x[0], x[1], x[2], c.extra(x), cfg)
			},
			func(g *G.ExprGraph, x []*G.Node) (*G.Node, error) {
				return stock.AttentionWith(x[0], x[1], x[2], c.extra(x), cfg)
			})
	})
}

// TestStickWeights checks what the paper claims of the weights: each row's sum is at most 1,
// every weight is at least 0, and a query gives nothing to a key after it (or to itself without
// attend_current), whatever the scores; in training and in evaluation.
func TestStickWeights(t *testing.T) {
	const n, heads, hd = 12, 2, 16
	rng := rand.New(rand.NewPCG(3, 1))
	z := make([][]float64, n)
	for i := range z {
		z[i] = randNormal(rng, n, 0, 4)
	}
	for _, current := range []bool{false, true} {
		q, k, v := stickInputs(z, heads, hd)
		cfg := nn.AttentionConfig{Batch: 1, SeqLen: n, Heads: heads, StickBreaking: true, AttendCurrent: current}
		for _, train := range []bool{true, false} {
			got, _, err := runOp([5][]float64{q, k, v}, cfg, heads*hd, 2, train)
			if err != nil {
				t.Fatal(err)
			}
			for h := range heads {
				for i := range n {
					row := got[i*heads*hd+h*hd : i*heads*hd+h*hd+n]
					var sum float64
					for j, a := range row {
						sum += a
						if a < 0 || (j > i || j == i && !current) && a != 0 {
							t.Errorf("attend_current %v, training %v: head %d A[%d][%d] = %v", current, train, h, i, j, a)
						}
					}
					if sum > 1+1e-15 {
						t.Errorf("attend_current %v, training %v: head %d row %d sums to %v", current, train, h, i, sum)
					}
				}
			}
		}
	}
}

// TestStickEvaluationIsTrainingsForward checks that evaluation gives the training forward pass's
// output and stats to the last bit while the keys fit in one tile, as for the softmax
// (TestTiledEvaluationIsTrainingsForward), with windows and attend_current.
func TestStickEvaluationIsTrainingsForward(t *testing.T) {
	same := func(a, b float32) bool { return math.Float32bits(a) == math.Float32bits(b) }
	if nn.BLAS != "go-asm" {
		const eps = 0x1p-23
		same = func(a, b float32) bool { return math.Abs(float64(a-b)) <= 32*eps*(1+math.Abs(float64(b))) }
	}
	const batch, heads, d = 2, 2, 16
	for _, n := range []int{1, 7, 64, 300, 600} {
		for _, window := range []int{0, 5} {
			for _, current := range []bool{false, true} {
				t.Run(fmt.Sprintf("n%d/window%d/current%v", n, window, current), func(t *testing.T) {
					rng := rand.New(rand.NewPCG(uint64(n), uint64(window)))
					in := attnInputs{q: randFloat32(rng, batch*n*d, 1), k: randFloat32(rng, batch*n*d, 1), v: randFloat32(rng, batch*n*d, 1),
						scale: randFloat32(rng, heads*n, 1)}
					cfg := nn.AttentionConfig{Batch: batch, SeqLen: n, Heads: heads, QueryScale: true, Window: window, StickBreaking: true, AttendCurrent: current}
					want, wantSt := runAttention(t, in, cfg, d, true)
					got, gotSt := runAttention(t, in, cfg, d, false)
					for i := range want {
						if !same(got[i], want[i]) {
							t.Fatalf("output %d: evaluation %v, training %v", i, got[i], want[i])
						}
					}
					if nn.BLAS != "go-asm" {
						return
					}
					for i := range wantSt.Entropy {
						if gotSt.Entropy[i] != wantSt.Entropy[i] || gotSt.FarMass[i] != wantSt.FarMass[i] || gotSt.First[i] != wantSt.First[i] {
							t.Fatalf("stats %d: evaluation %v %v %v, training %v %v %v", i, gotSt.Entropy[i], gotSt.FarMass[i], gotSt.First[i], wantSt.Entropy[i], wantSt.FarMass[i], wantSt.First[i])
						}
					}
				})
			}
		}
	}
}

// stickDefinition is query i's output in head h, and its entropy and mass on keys far back, from
// the definition in float64: β = σ(q·k/√hd) and A_ij = β_ij·Π(1−β_ik) over the keys k between,
// the product taken as it stands.
func stickDefinition(in attnInputs, n, heads, d, far, i, h, window int, current bool) (out []float64, ent, farMass, w0 float64) {
	hd := d / heads
	beta := func(j int) float64 {
		var dot float64
		for x := 0; x < hd; x++ {
			dot += float64(in.q[i*d+h*hd+x]) * float64(in.k[j*d+h*hd+x])
		}
		return 1 / (1 + math.Exp(-dot/math.Sqrt(float64(hd))))
	}
	last, first := i-1, 0
	if current {
		last = i
	}
	if window > 0 {
		first = max(0, i-window+1)
	}
	out = make([]float64, hd)
	left := 1.0 // what the nearer keys leave of the stick
	for j := last; j >= first; j-- {
		b := beta(j)
		a := b * left
		left *= 1 - b
		if a > 0 {
			ent -= a * math.Log(a)
		}
		if i-j >= far {
			farMass += a
		}
		if j == 0 {
			w0 = a
		}
		for x := range out {
			out[x] += a * float64(in.v[j*d+h*hd+x])
		}
	}
	return out, ent, farMass, w0
}

// TestStickLongEvaluation checks evaluation at 64 times a training length of 64 (4096 positions,
// two tiles of keys), with a window of 3000 and without, against the definition: the output, its
// entropy and its far mass. Head 0's scores are about −6 (q near 3, k near −1, as the
// reference's tests shift them), so β is small and every stick reaches back past the first
// tile of keys. Head 1's scores are all 0, so β = ½ and A_ij = 2^−(i−j): the recency the paper
// finds stick-breaking has without positions, its weights halving with each step back, and its
// stick spent within the first tile, where the block stops.
func TestStickLongEvaluation(t *testing.T) {
	if testing.Short() {
		t.Skip("scores 4096 positions")
	}
	const n, heads, d, far = 4096, 2, 8, 5 // runAttention's stats count keys 5 back as far
	hd := d / heads
	rng := rand.New(rand.NewPCG(7, 8))
	in := attnInputs{q: randFloat32(rng, n*d, 0.5), k: randFloat32(rng, n*d, 0.5), v: randFloat32(rng, n*d, 1)}
	for i := range n {
		clear(in.q[i*d+hd : (i+1)*d])
		for x := range hd {
			in.q[i*d+x] += 3
			in.k[i*d+x]--
		}
	}
	for _, window := range []int{0, 3000} {
		for _, current := range []bool{false, true} {
			cfg := nn.AttentionConfig{Batch: 1, SeqLen: n, Heads: heads, Window: window, StickBreaking: true, AttendCurrent: current}
			got, st := runAttention(t, in, cfg, d, false)
			var worst, worstStat float64
			for h := range heads {
				for _, i := range []int{0, 1, 255, 256, 2047, 2048, 2300, 3500, n - 1} {
					out, ent, farMass, w0 := stickDefinition(in, n, heads, d, far, i, h, window, current)
					for x, want := range out {
						worst = math.Max(worst, math.Abs(float64(got[i*d+h*hd+x])-want))
					}
					worstStat = math.Max(worstStat, math.Abs(st.Entropy[h*n+i]-ent))
					worstStat = math.Max(worstStat, math.Abs(st.FarMass[h*n+i]-farMass))
					worstStat = math.Max(worstStat, math.Abs(st.First[h*n+i]-w0))
					if h == 1 && i > 0 {
						want := 0.0 // Σ_j 2^−(i−j)·v_j, the nearest first
						for j, p := i-1, 0.5; j >= 0 && p > 0; j, p = j-1, p/2 {
							if current {
								want += p * float64(in.v[(j+1)*d+hd])
							} else {
								want += p * float64(in.v[j*d+hd])
							}
						}
						if current {
							want += math.Pow(0.5, float64(i+1)) * float64(in.v[hd])
						}
						if g := float64(got[i*d+hd]); math.Abs(g-want) > 1e-6 {
							t.Errorf("window %d, attend_current %v: equal scores, query %d: %v, want %v", window, current, i, g, want)
						}
					}
				}
			}
			if worst > 2e-6 || worstStat > 2e-5 {
				t.Errorf("window %d, attend_current %v: largest differences from the definition: output %.3g, entropy, far mass or first-key weight %.3g", window, current, worst, worstStat)
			}
			t.Logf("window %d, attend_current %v: largest differences from the definition: output %.3g, entropy, far mass or first-key weight %.3g", window, current, worst, worstStat)
		}
	}
}

// TestStickRefuses: a remap would leave keys out of the stick or move them; forget gates'
// gradient counts on the softmax; attend_current is stick-breaking's.
func TestStickRefuses(t *testing.T) {
	const n, heads, d = 6, 2, 8
	rng := rand.New(rand.NewPCG(1, 1))
	in := [5][]float64{randNormal(rng, n*d, 0, 1), randNormal(rng, n*d, 0, 1), randNormal(rng, n*d, 0, 1)}
	cfg := nn.AttentionConfig{Batch: 1, SeqLen: n, Heads: heads, StickBreaking: true,
		Remap: &nn.Remap{Spans: func(i int, dst []nn.Span) []nn.Span { return append(dst, nn.Span{From: 0, To: i + 1}) }}}
	if _, _, err := runOp(in, cfg, d, 2, false); err == nil || !strings.Contains(err.Error(), "stick-breaking") {
		t.Errorf("a remap: error %v", err)
	}
	logf := make([]float64, n*heads)
	cfg = nn.AttentionConfig{Batch: 1, SeqLen: n, Heads: heads, StickBreaking: true, LogForget: true}
	if _, _, err := runOpForget(in, logf, cfg, d, 2, true); err == nil || !strings.Contains(err.Error(), "forget gates") {
		t.Errorf("forget gates: error %v", err)
	}
	g := G.NewGraph()
	x := func(name string, shape ...int) *G.Node {
		return G.NewTensor(g, G.Float64, len(shape), G.WithShape(shape...), G.WithName(name), G.WithInit(G.Zeroes()))
	}
	cfg = nn.AttentionConfig{Batch: 1, SeqLen: n, Heads: heads, StickBreaking: true, CoPE: true}
	_, err := nn.AttentionWith(x("q", n, d), x("k", n, d), x("v", n, d), nn.AttentionInputs{CoPE: x("e", 1, d/heads, 3)}, cfg)
	if err == nil || !strings.Contains(err.Error(), "contextual positions") {
		t.Errorf("contextual positions: error %v", err)
	}
	cfg = nn.AttentionConfig{Batch: 1, SeqLen: n, Heads: heads, AttendCurrent: true}
	if _, _, err := runOp(in, cfg, d, 2, false); err == nil || !strings.Contains(err.Error(), "AttendCurrent") {
		t.Errorf("attend_current without stick-breaking: error %v", err)
	}
}
