package nn_test

import (
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"extrapolate/internal/gradcheck"
	"extrapolate/model/nn"
	"extrapolate/model/nn/stock"
)

// keyMap is a distance map written here as the position package writes them: the spans each
// query sees and the positions at which its Alt pairs are scored.
type keyMap struct {
	name  string
	spans func(i int, dst []nn.Span) []nn.Span
	// altQuery and altKey are the alternate positions; a nil altKey leaves Alt keys unrotated
	// (position 0) and gives the op no key tables.
	altQuery, altKey func(i int) float64
	// altDistance maps an Alt pair's bias by distance; nil keeps the true distance.
	altDistance func(i, j int) int
	interleaved bool
	window      int
}

// rerope caps the distance at w: keys w or more back are scored with the query at w and the
// key at 0. Its Alt span is empty for the first queries, which the op must drop.
func rerope(w int) keyMap {
	return keyMap{name: fmt.Sprintf("rerope%d", w),
		spans: func(i int, dst []nn.Span) []nn.Span {
			near := max(0, i-w+1)
			return append(dst, nn.Span{From: 0, To: near, Alt: true}, nn.Span{From: near, To: i + 1})
		},
		altQuery:    func(int) float64 { return float64(w) },
		altDistance: func(int, int) int { return w },
	}
}

// selfExtend groups the keys beyond the w nearest by g: query at ⌊i/g⌋ + w − ⌊w/g⌋, key at ⌊j/g⌋.
func selfExtend(g, w int) keyMap {
	q := func(i int) int { return i/g + w - w/g }
	return keyMap{name: fmt.Sprintf("self-extend%d-%d", g, w), interleaved: true,
		spans: func(i int, dst []nn.Span) []nn.Span {
			if near := i - w + 1; near > 0 {
				return append(dst, nn.Span{From: 0, To: near, Alt: true}, nn.Span{From: near, To: i + 1})
			}
			return append(dst, nn.Span{From: 0, To: i + 1})
		},
		altQuery:    func(i int) float64 { return float64(q(i)) },
		altKey:      func(j int) float64 { return float64(j / g) },
		altDistance: func(i, j int) int { return min(i, q(i)-j/g) },
	}
}

// sinks sees the first s keys, with the query at s+w, and the w nearest at their positions;
// the keys between are masked. Its Alt pairs keep the bias of their true distance.
func sinks(s, w int) keyMap {
	return keyMap{name: fmt.Sprintf("sinks%d-%d", s, w),
		spans: func(i int, dst []nn.Span) []nn.Span {
			if near := i - w + 1; near > s {
				return append(dst, nn.Span{From: 0, To: s, Alt: true}, nn.Span{From: near, To: i + 1})
			}
			return append(dst, nn.Span{From: 0, To: i + 1})
		},
		altQuery: func(int) float64 { return float64(s + w) },
		altKey:   func(j int) float64 { return float64(j) },
	}
}

// leaky is leaky ReRoPE: beyond w the distance grows by a third: w + (i−j−w)/3, with the query at
// w + (i−w)/3 and the key at j/3, fractional positions.
func leaky(w int) keyMap {
	q := func(i int) float64 { return float64(w) + float64(i-w)/3 }
	return keyMap{name: fmt.Sprintf("leaky%d", w),
		spans: func(i int, dst []nn.Span) []nn.Span {
			if near := i - w + 1; near > 0 {
				return append(dst, nn.Span{From: 0, To: near, Alt: true}, nn.Span{From: near, To: i + 1})
			}
			return append(dst, nn.Span{From: 0, To: i + 1})
		},
		altQuery:    q,
		altKey:      func(j int) float64 { return float64(j) / 3 },
		altDistance: func(i, j int) int { return min(i, int(q(i)-float64(j)/3)) },
	}
}

// windowed is the plain window as a map: what Window does, for the reference.
func windowed(w int) keyMap {
	return keyMap{name: fmt.Sprintf("window%d", w), window: w,
		spans: func(i int, dst []nn.Span) []nn.Span { return append(dst, nn.Span{From: 0, To: i + 1}) }}
}

// inverseFrequencies are RoPE's, θ_p = 10000^(−2p/hd).
func inverseFrequencies(pairs, hd int) []float64 {
	f := make([]float64, pairs)
	for p := range f {
		f[p] = math.Pow(10000, -2*float64(p)/float64(hd))
	}
	return f
}

// tables are the op's cos and sin tables of positions pos(0..n−1).
func tables(n int, freq []float64, pos func(int) float64) (cos, sin []float64) {
	for t := 0; t < n; t++ {
		for _, f := range freq {
			cos, sin = append(cos, math.Cos(pos(t)*f)), append(sin, math.Sin(pos(t)*f))
		}
	}
	return cos, sin
}

// config is the op's config for the map, with the rotation of the frequencies at true positions.
func (m keyMap) config(batch, n, heads int, freq []float64) nn.AttentionConfig {
	cfg := nn.AttentionConfig{Batch: batch, SeqLen: n, Heads: heads, Window: m.window}
	cfg.Positions = nn.Positions{Pairs: len(freq), Interleaved: m.interleaved}
	cfg.Positions.Cos, cfg.Positions.Sin = tables(n, freq, func(t int) float64 { return float64(t) })
	if m.altQuery == nil {
		return cfg
	}
	r := &nn.Remap{Spans: m.spans, AltDistance: m.altDistance}
	r.AltCos, r.AltSin = tables(n, freq, m.altQuery)
	if m.altKey != nil {
		r.AltKeyCos, r.AltKeySin = tables(n, freq, m.altKey)
	}
	cfg.Remap = r
	return cfg
}

// reference computes attention from its definition, in float64, one (query, key) pair at a time.
type reference struct {
	m              keyMap
	n, heads, d    int
	freq           []float64
	q, k, v, scale []float64 // q, k, v of one sequence; scale nil or (heads, n)
	bias           func(h, i, j int, alt bool) float64
	far            int
	sinks          []float64 // each head's sink logit, a term of the softmax with no value; nil for none
	softpick       bool      // softpick's weights over the keys the query sees, not the softmax's
}

// rotated is x rotated by the angles pos·θ_p, each pair computed here.
func (r reference) rotated(x []float64, pos float64) []float64 {
	y := append([]float64(nil), x...)
	for p, f := range r.freq {
		a, b := p, p+len(r.freq)
		if r.m.interleaved {
			a, b = 2*p, 2*p+1
		}
		c, s := math.Cos(pos*f), math.Sin(pos*f)
		y[a], y[b] = x[a]*c-x[b]*s, x[b]*c+x[a]*s
	}
	return y
}

// row is query i's output in head h, with its entropy and mass on keys far or more back.
func (r reference) row(h, i int) (out []float64, ent, far, first float64) {
	hd := r.d / r.heads
	vec := func(x []float64, t int) []float64 { return x[t*r.d+h*hd : t*r.d+(h+1)*hd] }
	var keys []int
	var score []float64
	for _, sp := range r.m.spans(i, nil) {
		for j := sp.From; j < sp.To; j++ {
			if r.m.window > 0 && i-j >= r.m.window {
				continue
			}
			qp, kp := float64(i), float64(j)
			if sp.Alt {
				qp, kp = r.m.altQuery(i), 0
				if r.m.altKey != nil {
					kp = r.m.altKey(j)
				}
			}
			qi, kj := r.rotated(vec(r.q, i), qp), r.rotated(vec(r.k, j), kp)
			var dot float64
			for x := range qi {
				dot += qi[x] * kj[x]
			}
			s := dot / math.Sqrt(float64(hd))
			if r.scale != nil {
				s *= r.scale[h*r.n+i]
			}
			if r.bias != nil {
				s += r.bias(h, i, j, sp.Alt)
			}
			keys, score = append(keys, j), append(score, s)
		}
	}
	mx := math.Inf(-1)
	if r.sinks != nil {
		mx = r.sinks[h]
	}
	for _, s := range score {
		mx = math.Max(mx, s)
	}
	if r.softpick {
		return r.weighted(h, i, keys, softpickWeights(score, mx))
	}
	var sum float64
	for x := range score {
		score[x] = math.Exp(score[x] - mx)
		sum += score[x]
	}
	if r.sinks != nil {
		e := math.Exp(r.sinks[h] - mx)
		sum += e
		ent = -e / sum * math.Log(e/sum) // the sink's share counts in the entropy, not in the output
	}
	out = make([]float64, hd)
	for x, j := range keys {
		p := score[x] / sum
		ent -= p * math.Log(p)
		if i-j >= r.far {
			far += p
		}
		if j == 0 {
			first += p
		}
		for e, vx := range vec(r.v, j) {
			out[e] += p * vx
		}
	}
	return out, ent, far, first
}

// softpickWeights is the reference's naive softpick of one query's scores over the keys it sees
// (zaydzuhri/softpick-attention, naive_softpick_attn.py: the masked keys at −inf, left out of
// the sum): u = e^{x−m} − e^{−m}, ReLU(u) / (Σ|u| + 10⁻⁸).
func softpickWeights(score []float64, m float64) []float64 {
	em := math.Exp(-m)
	var sum float64
	for _, s := range score {
		sum += math.Abs(math.Exp(s-m) - em)
	}
	y := make([]float64, len(score))
	for x, s := range score {
		y[x] = math.Max(math.Exp(s-m)-em, 0) / (sum + 1e-8)
	}
	return y
}

// weighted is query i's output in head h for the keys' weights y, with its entropy, far mass
// and first-key weight.
func (r reference) weighted(h, i int, keys []int, y []float64) (out []float64, ent, far, first float64) {
	hd := r.d / r.heads
	out = make([]float64, hd)
	for x, j := range keys {
		p := y[x]
		if p > 0 {
			ent -= p * math.Log(p)
		}
		if i-j >= r.far {
			far += p
		}
		if j == 0 {
			first += p
		}
		for e, vx := range r.v[j*r.d+h*hd : j*r.d+(h+1)*hd] {
			out[e] += p * vx
		}
	}
	return out, ent, far, first
}

// checkMaskedPath checks a normaliser on the masked path, where evaluation goes with a window or
// a remap, against the reference: a sliding window in training and evaluation, and ReRoPE's
// and StreamingLLM's remaps in evaluation, at 300 positions (one tile of keys) and 2600
// (several), with a bias by distance. set makes the config and the reference the normaliser's;
// logits are the sink logits the op takes (nil for none); seed varies the draws by test.
func checkMaskedPath(t *testing.T, seed uint64, logits []float64, set func(*nn.AttentionConfig, *reference)) {
	const heads, d, pairs = 2, 16, 4
	freq := inverseFrequencies(pairs, d/heads)
	for _, n := range []int{300, 2600} {
		if n > 2048 && testing.Short() {
			continue
		}
		w := n / 6
		for x, m := range []keyMap{windowed(w), rerope(w), sinks(4, w)} {
			t.Run(fmt.Sprintf("n%d/%s", n, m.name), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(uint64(n), seed+uint64(x)))
				q, k, v := randNormal(rng, n*d, 0, 0.7), randNormal(rng, n*d, 0, 0.7), randNormal(rng, n*d, 0, 1)
				bias := randNormal(rng, heads*n, 0, 0.5)
				cfg := m.config(1, n, heads, freq)
				cfg.Bias = nn.ByDistance
				far := n / 3
				in := [5][]float64{q, k, v, bias, nil}
				r := reference{m: m, n: n, heads: heads, d: d, freq: freq, far: far, q: q, k: k, v: v, bias: m.distanceBias(bias, n)}
				set(&cfg, &r)
				ref := func(int) reference { return r }
				got, st, err := runOpAll(in, nil, logits, cfg, d, far, false)
				if err != nil {
					t.Fatal(err)
				}
				checkRows(t, got, st, ref, 1, rowsToCheck(rng, n), 1e-12)
				if cfg.Remap != nil || n > 2048 {
					return // a remap is for evaluation only; training holds n² scores
				}
				train, trainSt, err := runOpAll(in, nil, logits, cfg, d, far, true)
				if err != nil {
					t.Fatal(err)
				}
				checkRows(t, train, trainSt, ref, 1, rowsToCheck(rng, n), 1e-12)
			})
		}
	}
}

// distanceBias is a bias by distance for the reference: an Alt pair's at the map's distance.
func (m keyMap) distanceBias(b []float64, n int) func(h, i, j int, alt bool) float64 {
	return func(h, i, j int, alt bool) float64 {
		if alt && m.altDistance != nil {
			return b[h*n+m.altDistance(i, j)]
		}
		return b[h*n+i-j]
	}
}

// runOp runs the op once on float64 inputs, differentiated (as training runs it) or not, and
// returns its output and stats, or the error the graph or the run gave.
func runOp(in [5][]float64, cfg nn.AttentionConfig, d, far int, train bool) ([]float64, *nn.AttentionStats, error) {
	return runOpForget(in, nil, cfg, d, far, train)
}

// runOpForget is runOp with log forget gates logf, (batch·n, heads), or none.
func runOpForget(in [5][]float64, logf []float64, cfg nn.AttentionConfig, d, far int, train bool) ([]float64, *nn.AttentionStats, error) {
	return runOpAll(in, logf, nil, cfg, d, far, train)
}

// runOpAll is runOp with log forget gates logf and sink logits sinks, (heads), each nil for none.
func runOpAll(in [5][]float64, logf, sinks []float64, cfg nn.AttentionConfig, d, far int, train bool) ([]float64, *nn.AttentionStats, error) {
	g := G.NewGraph()
	node := func(name string, x []float64, shape ...int) *G.Node {
		if x == nil {
			return nil
		}
		v := tensor.New(tensor.WithShape(shape...), tensor.WithBacking(append([]float64(nil), x...)))
		return G.NewTensor(g, tensor.Float64, len(shape), G.WithShape(shape...), G.WithName(name), G.WithValue(v))
	}
	n := cfg.Batch * cfg.SeqLen
	biasShape := []int{cfg.Heads, cfg.SeqLen}
	if cfg.Bias == nn.PerQuery {
		biasShape = append(biasShape, cfg.SeqLen)
	}
	cfg.Stats = &nn.AttentionStats{Far: far}
	q := node("q", in[0], n, d)
	out, err := nn.AttentionWith(q, node("k", in[1], n, d), node("v", in[2], n, d), nn.AttentionInputs{Bias: node("bias", in[3], biasShape...),
		Scale: node("scale", in[4], cfg.Heads, cfg.SeqLen), LogForget: node("logf", logf, n, cfg.Heads), Sinks: node("sinks", sinks, cfg.Heads)}, cfg)
	if err != nil {
		return nil, nil, err
	}
	if train {
		if _, err := G.Grad(G.Must(G.Sum(out)), q); err != nil {
			return nil, nil, err
		}
	}
	vm := G.NewTapeMachine(g)
	defer vm.Close()
	if err := vm.RunAll(); err != nil {
		return nil, nil, err
	}
	return append([]float64(nil), out.Value().Data().([]float64)...), cfg.Stats, nil
}

func randNormal(rng *rand.Rand, n int, mean, spread float64) []float64 {
	x := make([]float64, n)
	for i := range x {
		x[i] = mean + spread*rng.NormFloat64()
	}
	return x
}

// checkRows compares the op's output and stats for the given rows of every head and sequence
// with the reference's, which ref gives for one sequence.
func checkRows(t *testing.T, got []float64, st *nn.AttentionStats, ref func(b int) reference, batch int, rows []int, tol float64) {
	t.Helper()
	var worst, worstStat float64
	r0 := ref(0)
	hd := r0.d / r0.heads
	for h := 0; h < r0.heads; h++ {
		for _, i := range rows {
			var ent, far, first float64 // summed over the sequences, as the stats are
			for b := 0; b < batch; b++ {
				want, e, f, w0 := ref(b).row(h, i)
				for x, w := range want {
					g := got[(b*r0.n+i)*r0.d+h*hd+x]
					diff := math.Abs(g - w)
					if !(diff <= tol) {
						t.Fatalf("sequence %d head %d query %d [%d]: %v, definition %v", b, h, i, x, g, w)
					}
					worst = math.Max(worst, diff)
				}
				ent, far, first = ent+e, far+f, first+w0
			}
			de, df := math.Abs(st.Entropy[h*r0.n+i]-ent), math.Abs(st.FarMass[h*r0.n+i]-far)
			d0 := math.Abs(st.First[h*r0.n+i] - first)
			if !(de <= tol && df <= tol && d0 <= tol) {
				t.Fatalf("head %d query %d: entropy %v far mass %v first-key weight %v, definition %v %v %v",
					h, i, st.Entropy[h*r0.n+i], st.FarMass[h*r0.n+i], st.First[h*r0.n+i], ent, far, first)
			}
			worstStat = math.Max(worstStat, math.Max(d0, math.Max(de, df)))
		}
	}
	t.Logf("largest differences from the definition: output %.3g, stats %.3g", worst, worstStat)
}

// rowsToCheck is every row of a short sequence, and of a long one the rows at the edges of the
// tiles of queries and keys, and a few others.
func rowsToCheck(rng *rand.Rand, n int) []int {
	if n <= 400 {
		rows := make([]int, n)
		for i := range rows {
			rows[i] = i
		}
		return rows
	}
	rows := []int{0, 1, 255, 256, 257, 511, 2047, 2048, 2049, n - 1}
	for range 12 {
		rows = append(rows, rng.IntN(n))
	}
	return rows
}

// TestAttentionRemapIsDefinition checks evaluation with a remap against attention computed here
// from its definition, in float64, for maps of each kind, with a bias by distance (mapped or not)
// and a query scale, on sequences in one tile of keys and across several; and a remap cut by a
// window.
func TestAttentionRemapIsDefinition(t *testing.T) {
	const heads, d, pairs = 2, 16, 3 // a partial rotation: two dimensions of each head pass
	freq := inverseFrequencies(pairs, d/heads)
	for _, n := range []int{300, 2600} {
		if n > 2048 && testing.Short() {
			continue
		}
		w := n / 6
		maps := []keyMap{rerope(w), selfExtend(3, w), sinks(4, w), leaky(w), rerope(w)}
		maps[4].name, maps[4].window = maps[4].name+"+window", 2*w
		batch := 1
		if n < 2048 {
			batch = 2
		}
		for x, m := range maps {
			t.Run(fmt.Sprintf("n%d/%s", n, m.name), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(uint64(n), uint64(x)))
				q, k, v := randNormal(rng, batch*n*d, 0, 0.7), randNormal(rng, batch*n*d, 0, 0.7), randNormal(rng, batch*n*d, 0, 1)
				bias, scale := randNormal(rng, heads*n, 0, 0.5), randNormal(rng, heads*n, 1, 0.3)
				for δ := 0; δ < n; δ++ {
					bias[δ] -= 4 * float64(δ) / float64(n) // head 0 prefers the near keys
				}
				cfg := m.config(batch, n, heads, freq)
				cfg.Bias, cfg.QueryScale = nn.ByDistance, true
				far := n / 3
				got, st, err := runOp([5][]float64{q, k, v, bias, scale}, cfg, d, far, false)
				if err != nil {
					t.Fatal(err)
				}
				ref := func(b int) reference {
					return reference{m: m, n: n, heads: heads, d: d, freq: freq, far: far, scale: scale, bias: m.distanceBias(bias, n),
						q: q[b*n*d : (b+1)*n*d], k: k[b*n*d : (b+1)*n*d], v: v[b*n*d : (b+1)*n*d]}
				}
				checkRows(t, got, st, ref, batch, rowsToCheck(rng, n), 1e-12)
				// float32, against the float64 output just checked: a few float32 units.
				got32, _ := runAttention(t, attnInputs{q: to32(q), k: to32(k), v: to32(v), bias: to32(bias), scale: to32(scale)}, cfg, d, false)
				sameWithin(t, "float32", to64(got32), got, nil, nil, 2e-5)
			})
		}
	}
}

// TestAttentionRemapWithoutRotation checks a remap of a model without a rotation, where only the
// bias by distance of Alt pairs changes (ReRoPE on ALiBi): Alt spans take the true scores.
func TestAttentionRemapWithoutRotation(t *testing.T) {
	const heads, d = 2, 8
	for _, n := range []int{300, 2600} {
		if n > 2048 && testing.Short() {
			continue
		}
		m := rerope(n / 4)
		rng := rand.New(rand.NewPCG(uint64(n), 11))
		q, k, v := randNormal(rng, n*d, 0, 0.7), randNormal(rng, n*d, 0, 0.7), randNormal(rng, n*d, 0, 1)
		bias := make([]float64, heads*n)
		for x := range bias {
			bias[x] = -float64(x%n) / 50 // ALiBi's slope
		}
		cfg := m.config(1, n, heads, nil)
		cfg.Bias = nn.ByDistance
		got, st, err := runOp([5][]float64{q, k, v, bias, nil}, cfg, d, 30, false)
		if err != nil {
			t.Fatal(err)
		}
		r := reference{m: m, n: n, heads: heads, d: d, far: 30, q: q, k: k, v: v, bias: m.distanceBias(bias, n)}
		checkRows(t, got, st, func(int) reference { return r }, 1, rowsToCheck(rng, n), 1e-12)
	}
}

// TestAttentionRemapBiases checks a remap that masks keys and scores some at alternate positions
// with the other forms of bias, which Alt pairs take at their true (i, j), and with none.
func TestAttentionRemapBiases(t *testing.T) {
	const heads, d, pairs = 2, 8, 2
	freq := inverseFrequencies(pairs, d/heads)
	f := func(h, i, j int) float64 { return 0.5 * math.Sin(0.7*float64(i)+1.3*float64(j)+float64(h)) }
	for _, n := range []int{300, 2600} {
		if n > 2048 && testing.Short() {
			continue
		}
		for _, form := range []nn.BiasForm{nn.NoBias, nn.PerQuery, nn.ByRow} {
			if form == nn.PerQuery && n > 2048 {
				continue // heads·n² values
			}
			t.Run(fmt.Sprintf("n%d/form%d", n, form), func(t *testing.T) {
				m := sinks(3, n/5)
				rng := rand.New(rand.NewPCG(uint64(n), uint64(form)))
				q, k, v := randNormal(rng, n*d, 0, 0.7), randNormal(rng, n*d, 0, 0.7), randNormal(rng, n*d, 0, 1)
				cfg := m.config(1, n, heads, freq)
				cfg.Bias = form
				r := reference{m: m, n: n, heads: heads, d: d, freq: freq, far: 50, q: q, k: k, v: v}
				var bias []float64
				switch form {
				case nn.PerQuery:
					bias = make([]float64, heads*n*n)
					for h := 0; h < heads; h++ {
						for i := 0; i < n; i++ {
							for j := 0; j <= i; j++ {
								bias[(h*n+i)*n+j] = f(h, i, j)
							}
						}
					}
				case nn.ByRow:
					cfg.BiasRow = func(h, i, j0 int, dst []float64) {
						for x := range dst {
							dst[x] = f(h, i, j0+x)
						}
					}
				}
				if form != nn.NoBias {
					r.bias = func(h, i, j int, _ bool) float64 { return f(h, i, j) }
				}
				got, st, err := runOp([5][]float64{q, k, v, bias, nil}, cfg, d, r.far, false)
				if err != nil {
					t.Fatal(err)
				}
				checkRows(t, got, st, func(int) reference { return r }, 1, rowsToCheck(rng, n), 1e-12)
			})
		}
	}
}

// TestAttentionWindow checks the window in training's forward pass against attention from its
// definition, and evaluation's against training's, in float64 to rounding and in float32 to a
// few of its units, for windows of one key, of a few, and as long as the sequence, on sequences
// in one tile of keys and across several.
func TestAttentionWindow(t *testing.T) {
	const heads, d, pairs = 2, 16, 4
	freq := inverseFrequencies(pairs, d/heads)
	for _, c := range []struct{ n, w int }{{300, 1}, {300, 2}, {300, 37}, {300, 256}, {300, 300}, {2600, 700}} {
		if c.n > 2048 && testing.Short() {
			continue
		}
		t.Run(fmt.Sprintf("n%d/w%d", c.n, c.w), func(t *testing.T) {
			m := windowed(c.w)
			rng := rand.New(rand.NewPCG(uint64(c.n), uint64(c.w)))
			q, k, v := randNormal(rng, c.n*d, 0, 0.7), randNormal(rng, c.n*d, 0, 0.7), randNormal(rng, c.n*d, 0, 1)
			bias, scale := randNormal(rng, heads*c.n, 0, 0.5), randNormal(rng, heads*c.n, 1, 0.3)
			cfg := m.config(1, c.n, heads, freq)
			cfg.Bias, cfg.QueryScale = nn.ByDistance, true
			in := [5][]float64{q, k, v, bias, scale}
			far := c.w / 2
			train, trainSt, err := runOp(in, cfg, d, far, true)
			if err != nil {
				t.Fatal(err)
			}
			r := reference{m: m, n: c.n, heads: heads, d: d, freq: freq, far: far, q: q, k: k, v: v, scale: scale, bias: m.distanceBias(bias, c.n)}
			checkRows(t, train, trainSt, func(int) reference { return r }, 1, rowsToCheck(rng, c.n), 1e-12)
			eval, evalSt, err := runOp(in, cfg, d, far, false)
			if err != nil {
				t.Fatal(err)
			}
			sameWithin(t, "float64", eval, train, evalSt, trainSt, 1e-12)
			// float32: a sum over up to 700 keys in another order, a few float32 units.
			in32 := attnInputs{q: to32(q), k: to32(k), v: to32(v), bias: to32(bias), scale: to32(scale)}
			train32, trainSt32 := runAttention(t, in32, cfg, d, true)
			eval32, evalSt32 := runAttention(t, in32, cfg, d, false)
			sameWithin(t, "float32 evaluation", to64(eval32), to64(train32), evalSt32, trainSt32, 2e-5)
			sameWithin(t, "float32 training", to64(train32), train, nil, nil, 2e-5)
		})
	}
}

// sameWithin requires got and want, and their stats when given, to agree within tol.
func sameWithin(t *testing.T, what string, got, want []float64, gotSt, wantSt *nn.AttentionStats, tol float64) {
	t.Helper()
	for i := range want {
		if !(math.Abs(got[i]-want[i]) <= tol) {
			t.Fatalf("%s: output %d: %v, want %v", what, i, got[i], want[i])
		}
	}
	if gotSt == nil {
		return
	}
	for i := range wantSt.Entropy {
		if !(math.Abs(gotSt.Entropy[i]-wantSt.Entropy[i]) <= 10*tol && math.Abs(gotSt.FarMass[i]-wantSt.FarMass[i]) <= 10*tol &&
			math.Abs(gotSt.First[i]-wantSt.First[i]) <= 10*tol) {
			t.Fatalf("%s: stats %d: %v %v %v, want %v %v %v", what, i, gotSt.Entropy[i], gotSt.FarMass[i], gotSt.First[i],
				wantSt.Entropy[i], wantSt.FarMass[i], wantSt.First[i])
		}
	}
}

func to32(x []float64) []float32 {
	y := make([]float32, len(x))
	for i, v := range x {
		y[i] = float32(v)
	}
	return y
}

func to64(x []float32) []float64 {
	y := make([]float64, len(x))
	for i, v := range x {
		y[i] = float64(v)
	}
	return y
}

// TestAttentionRemapRefusals checks the errors: a remap in training, a distance map without a
// bias by distance, tables too short, and spans that break Remap.Spans's promise.
func TestAttentionRemapRefusals(t *testing.T) {
	const n, heads, d = 20, 2, 8
	freq := inverseFrequencies(2, d/heads)
	rng := rand.New(rand.NewPCG(3, 3))
	// ReRoPE without its distance map: there is no bias to map.
	remap := func() nn.AttentionConfig {
		cfg := rerope(4).config(1, n, heads, freq)
		cfg.Remap.AltDistance = nil
		return cfg
	}
	in := [5][]float64{randNormal(rng, n*d, 0, 1), randNormal(rng, n*d, 0, 1), randNormal(rng, n*d, 0, 1)}
	if _, _, err := runOp(in, remap(), d, 5, false); err != nil {
		t.Fatalf("a good remap: %v", err)
	}
	if _, _, err := runOp(in, remap(), d, 5, true); err == nil || !strings.Contains(err.Error(), "evaluation only") {
		t.Errorf("a remap in training: error %v", err)
	}
	short := remap()
	short.Remap.AltSin = short.Remap.AltSin[:10]
	if _, _, err := runOp(in, short, d, 5, false); err == nil {
		t.Error("short tables: no error")
	}
	perQuery := rerope(4).config(1, n, heads, freq)
	perQuery.Bias = nn.PerQuery
	in2 := in
	in2[3] = make([]float64, heads*n*n)
	if _, _, err := runOp(in2, perQuery, d, 5, false); err == nil || !strings.Contains(err.Error(), "maps distances") {
		t.Errorf("a distance map with a per-query bias: error %v", err)
	}
	bad := map[string]func(i int, dst []nn.Span) []nn.Span{
		"without key i": func(i int, dst []nn.Span) []nn.Span { return append(dst, nn.Span{From: 0, To: i}) },
		"key i Alt":     func(i int, dst []nn.Span) []nn.Span { return append(dst, nn.Span{From: 0, To: i + 1, Alt: true}) },
		"overlapping": func(i int, dst []nn.Span) []nn.Span {
			return append(dst, nn.Span{From: 0, To: 1}, nn.Span{From: 0, To: i + 1})
		},
		"a future key":   func(i int, dst []nn.Span) []nn.Span { return append(dst, nn.Span{From: 0, To: i + 2}) },
		"a negative key": func(i int, dst []nn.Span) []nn.Span { return append(dst, nn.Span{From: -1, To: i + 1}) },
	}
	for name, spans := range bad {
		cfg := remap()
		cfg.Remap.Spans = spans
		if _, _, err := runOp(in, cfg, d, 5, false); err == nil || !strings.Contains(err.Error(), "spans") {
			t.Errorf("spans %s: error %v", name, err)
		}
	}
}

// TestAttentionWindowGradient checks the gradient through a window, which the backward pass
// takes through the probabilities the window made zero, against finite differences, for every
// way of calling attention, with windows that pair rows or not (softmaxPair).
func TestAttentionWindowGradient(t *testing.T) {
	const batch, seqLen, heads, d = 2, 5, 2, 12
	rng := rand.New(rand.NewPCG(5, 8))
	cases := attentionCases(rng, seqLen, 3)
	for _, name := range slices.Sorted(maps.Keys(cases)) {
		c := cases[name]
		for _, w := range []int{1, 2, 3} {
			t.Run(fmt.Sprintf("%s/w%d", name, w), func(t *testing.T) {
				cfg := c.config(batch, seqLen, heads)
				cfg.Window = w
				gradcheck.Check(t, c.inputs(rng, batch, seqLen, heads, d), func(g *G.ExprGraph, x []*G.Node) (*G.Node, error) {
					return nn.AttentionWith(x[0], x[1], x[2], c.extra(x), cfg)
				})
			})
		}
	}
}

// TestAttentionWindowMatchesStockOps checks the window's output and gradients against the stock
// composition, which masks the keys before the window as it masks the future ones.
func TestAttentionWindowMatchesStockOps(t *testing.T) {
	const batch, seqLen, heads, d = 2, 5, 2, 8
	rng := rand.New(rand.NewPCG(6, 6))
	cases := attentionCases(rng, seqLen, 2)
	for _, name := range slices.Sorted(maps.Keys(cases)) {
		c := cases[name]
		for _, w := range []int{2, 3} {
			t.Run(fmt.Sprintf("%s/w%d", name, w), func(t *testing.T) {
				cfg := c.config(batch, seqLen, heads)
				cfg.Window = w
				gradcheck.Same(t, c.inputs(rng, batch, seqLen, heads, d),
					func(g *G.ExprGraph, x []*G.Node) (*G.Node, error) {
						return nn.AttentionWith(x[0], x[1], x[2], c.extra(x), cfg)
					},
					func(g *G.ExprGraph, x []*G.Node) (*G.Node, error) {
						return stock.AttentionWith(x[0], x[1], x[2], c.extra(x), cfg)
					})
			})
		}
	}
}
