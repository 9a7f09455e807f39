package nn_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"extrapolate/model/nn"
)

// attnInputs are the inputs of one attention op, in float32.
type attnInputs struct {
	q, k, v, bias, scale, logf []float32
}

func randFloat32(rng *rand.Rand, n int, spread float64) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(spread * rng.NormFloat64())
	}
	return x
}

// runAttention runs the op once, as training runs it (differentiated) or as evaluation does, and
// returns its output and the stats it gathered.
func runAttention(t *testing.T, in attnInputs, cfg nn.AttentionConfig, d int, train bool) ([]float32, *nn.AttentionStats) {
	t.Helper()
	g := G.NewGraph()
	node := func(name string, x []float32, shape ...int) *G.Node {
		if x == nil {
			return nil
		}
		v := tensor.New(tensor.WithShape(shape...), tensor.WithBacking(append([]float32(nil), x...)))
		return G.NewTensor(g, tensor.Float32, len(shape), G.WithShape(shape...), G.WithName(name), G.WithValue(v))
	}
	n := cfg.Batch * cfg.SeqLen
	biasShape := []int{cfg.Heads, cfg.SeqLen}
	if cfg.Bias == nn.PerQuery {
		biasShape = append(biasShape, cfg.SeqLen)
	}
	q, k, v := node("q", in.q, n, d), node("k", in.k, n, d), node("v", in.v, n, d)
	cfg.Stats = &nn.AttentionStats{Far: 5}
	out, err := nn.AttentionWith(q, k, v, nn.AttentionInputs{Bias: node("bias", in.bias, biasShape...), Scale: node("scale", in.scale, cfg.Heads, cfg.SeqLen),
		LogForget: node("logf", in.logf, n, cfg.Heads)}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if train {
		if _, err := G.Grad(G.Must(G.Sum(out)), q); err != nil {
			t.Fatal(err)
		}
	}
	vm := G.NewTapeMachine(g)
	defer vm.Close()
	if err := vm.RunAll(); err != nil {
		t.Fatal(err)
	}
	return append([]float32(nil), out.Value().Data().([]float32)...), cfg.Stats
}

// TestTiledEvaluationIsTrainingsForward checks that evaluation, which holds one tile of scores,
// gives the training forward pass's output and stats to the last bit while the keys fit in one
// tile (every length of the committed comparisons), for every bias form. Package gemm's kernel
// computes each element of a product in the same order whatever the product's shape, so a
// block of queries gets the bits of the whole; other BLAS libraries (OpenBLAS) choose kernels by
// shape, so with them the test asks for float32 rounding instead: a sum over up to 600 keys in
// another order drifts by about √600 ≈ 25 float32 epsilons of its terms' size, so 32ε·(1+|x|).
func TestTiledEvaluationIsTrainingsForward(t *testing.T) {
	same := func(a, b float32) bool { return math.Float32bits(a) == math.Float32bits(b) }
	if nn.BLAS != "go-asm" {
		const eps = 0x1p-23
		same = func(a, b float32) bool { return math.Abs(float64(a-b)) <= 32*eps*(1+math.Abs(float64(b))) }
	}
	const batch, heads, d = 2, 2, 16
	for _, n := range []int{1, 7, 64, 65, 200, 300, 600} {
		for _, form := range []nn.BiasForm{nn.NoBias, nn.ByDistance, nn.PerQuery} {
			t.Run(fmt.Sprintf("n%d/form%d", n, form), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(uint64(n), uint64(form)))
				in := attnInputs{q: randFloat32(rng, batch*n*d, 1), k: randFloat32(rng, batch*n*d, 1), v: randFloat32(rng, batch*n*d, 1),
					scale: randFloat32(rng, heads*n, 1)}
				switch form {
				case nn.ByDistance:
					in.bias = randFloat32(rng, heads*n, 1)
				case nn.PerQuery:
					in.bias = randFloat32(rng, heads*n*n, 1)
				}
				cfg := nn.AttentionConfig{Batch: batch, SeqLen: n, Heads: heads, Bias: form, QueryScale: true}
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

// TestTiledEvaluationOnline checks the online softmax, used once a query's keys span several
// tiles, against attention computed here from its definition in float64: softmax over the keys
// up to the query of scale·q·kᵀ/√d_head + bias, times v; its entropy and mass on far keys.
func TestTiledEvaluationOnline(t *testing.T) {
	if testing.Short() {
		t.Skip("scores 2.2k positions")
	}
	const n, heads, d, far = 2048 + 150, 2, 8, 5
	hd := d / heads
	rng := rand.New(rand.NewPCG(7, 7))
	// Scores spread little, and a bias that falls with distance in head 0 (the running maximum
	// grows in the second tile: the nearest keys) and grows with it in head 1 (it stays).
	in := attnInputs{q: randFloat32(rng, n*d, 0.5), k: randFloat32(rng, n*d, 0.5), v: randFloat32(rng, n*d, 1), scale: randFloat32(rng, heads*n, 1)}
	in.bias = make([]float32, heads*n)
	for h := 0; h < heads; h++ {
		for δ := 0; δ < n; δ++ {
			in.bias[h*n+δ] = float32(float64(2*h-1) * float64(δ) / 20)
		}
	}
	got, st := runAttention(t, in, nn.AttentionConfig{Batch: 1, SeqLen: n, Heads: heads, Bias: nn.ByDistance, QueryScale: true}, d, false)
	var worst, worstStat float64
	for h := 0; h < heads; h++ {
		for _, i := range []int{0, 1, 2047, 2048, 2049, 2100, n - 1} {
			s := make([]float64, i+1)
			mx := math.Inf(-1)
			for j := range s {
				var dot float64
				for x := 0; x < hd; x++ {
					dot += float64(in.q[i*d+h*hd+x]) * float64(in.k[j*d+h*hd+x])
				}
				s[j] = float64(in.scale[h*n+i])*dot/math.Sqrt(float64(hd)) + float64(in.bias[h*n+i-j])
				mx = math.Max(mx, s[j])
			}
			var sum float64
			for j := range s {
				s[j] = math.Exp(s[j] - mx)
				sum += s[j]
			}
			var ent, farMass float64
			out := make([]float64, hd)
			for j := range s {
				p := s[j] / sum
				if p > 0 {
					ent -= p * math.Log(p)
				}
				if i-j >= far {
					farMass += p
				}
				for x := range out {
					out[x] += p * float64(in.v[j*d+h*hd+x])
				}
			}
			for x, want := range out {
				worst = math.Max(worst, math.Abs(float64(got[i*d+h*hd+x])-want))
			}
			worstStat = math.Max(worstStat, math.Abs(st.Entropy[h*n+i]-ent))
			worstStat = math.Max(worstStat, math.Abs(st.FarMass[h*n+i]-farMass))
			worstStat = math.Max(worstStat, math.Abs(st.First[h*n+i]-s[0]/sum))
		}
	}
	// float32 scores of size up to about 10: a few units of float32 rounding.
	if worst > 2e-5 || worstStat > 2e-4 {
		t.Fatalf("largest differences from the definition: output %.3g, entropy, far mass or first-key weight %.3g", worst, worstStat)
	}
	t.Logf("largest differences from the definition: output %.3g, entropy, far mass or first-key weight %.3g", worst, worstStat)
}

// TestBiasByRow checks that a per-query bias given a row at a time is the same, bit for bit, as
// the same bias given as a (heads, n, n) input, in one tile and across tiles.
func TestBiasByRow(t *testing.T) {
	const heads, d = 2, 8
	for _, n := range []int{50, 2048 + 70} {
		if n > 2048 && testing.Short() {
			continue
		}
		rng := rand.New(rand.NewPCG(uint64(n), 9))
		in := attnInputs{q: randFloat32(rng, n*d, 1), k: randFloat32(rng, n*d, 1), v: randFloat32(rng, n*d, 1)}
		bias := make([]float64, heads*n*n)
		for i := range bias {
			bias[i] = rng.NormFloat64()
		}
		in.bias = make([]float32, len(bias))
		for i, x := range bias {
			in.bias[i] = float32(x)
		}
		want, wantSt := runAttention(t, in, nn.AttentionConfig{Batch: 1, SeqLen: n, Heads: heads, Bias: nn.PerQuery}, d, false)
		row := func(h, i, j0 int, dst []float64) { copy(dst, bias[(h*n+i)*n+j0:]) }
		in.bias = nil
		got, gotSt := runAttention(t, in, nn.AttentionConfig{Batch: 1, SeqLen: n, Heads: heads, Bias: nn.ByRow, BiasRow: row}, d, false)
		for i := range want {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("n %d: output %d: by row %v, as input %v", n, i, got[i], want[i])
			}
		}
		for i := range wantSt.Entropy {
			if gotSt.Entropy[i] != wantSt.Entropy[i] {
				t.Fatalf("n %d: entropy %d: by row %v, as input %v", n, i, gotSt.Entropy[i], wantSt.Entropy[i])
			}
		}
	}
}
