package position

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// The golden numbers below come from testdata/golden.py (t5_bucket, kerple_log, fire), written
// from the papers' reference code apart from this package.

func TestT5Buckets(t *testing.T) {
	s, err := New(Spec{DModel: 8, Heads: 2, TrainLen: 8, Config: Config{Scheme: "t5", Params: map[string]any{"max_distance": 128}}})
	if err != nil {
		t.Fatal(err)
	}
	t5 := s.(T5)
	want := map[int]int{0: 0, 15: 15, 16: 16, 17: 16, 18: 16, 20: 17, 21: 18, 31: 21, 32: 21, 33: 21, 64: 26, 100: 30, 127: 31, 128: 31, 199: 31}
	for d, b := range want {
		if got := t5.Bucket(d); got != b {
			t.Errorf("bucket of distance %d = %d, want %d", d, got, b)
		}
	}
	small, err := New(Spec{DModel: 8, Heads: 2, TrainLen: 8, Config: Config{Scheme: "t5", Params: map[string]any{"buckets": 8, "max_distance": 20}}})
	if err != nil {
		t.Fatal(err)
	}
	for d, b := range []int{0, 1, 2, 3, 4, 4, 5, 5, 5, 6, 6, 6, 6, 6, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7} {
		if got := small.(T5).Bucket(d); got != b {
			t.Errorf("8 buckets, max distance 20: bucket of %d = %d, want %d", d, got, b)
		}
	}
}

func TestT5BiasLooksUpBuckets(t *testing.T) {
	t5 := T5{Heads: 2, Buckets: 8, MaxDistance: 20, Scale: 1.5}
	table := make([]float64, 8*2)
	for i := range table {
		table[i] = float64(i) // bucket b, head h holds 2b+h
	}
	b, err := t5.LearnedBias([][]float64{table}, 0, 24)
	if err != nil {
		t.Fatal(err)
	}
	for d := 0; d < 24; d++ {
		for h := 0; h < 2; h++ {
			if want := 1.5 * float64(2*t5.Bucket(d)+h); b.At(h, 23, 23-d) != want {
				t.Fatalf("head %d distance %d: %g, want %g", h, d, b.At(h, 23, 23-d), want)
			}
		}
	}
}

// TestT5Defaults checks the table's training settings against x-transformers'
// RelativePositionBias (an N(0, 1) table times √dim_head) and that, trained at 64 or 128 tokens,
// every bucket is reached within the training length, as every bucket is in T5 at 512.
func TestT5Defaults(t *testing.T) {
	for _, tc := range []struct{ dModel, heads, trainLen, maxDistance int }{
		{64, 4, 64, 64}, {128, 4, 128, 128}, {256, 8, 512, 128}, {64, 4, 8, 17},
	} {
		s, err := New(Spec{DModel: tc.dModel, Heads: tc.heads, TrainLen: tc.trainLen, Config: Config{Scheme: "t5"}})
		if err != nil {
			t.Fatal(err)
		}
		t5 := s.(T5)
		headDim := float64(tc.dModel / tc.heads)
		if t5.Std != 1 || t5.Scale != math.Sqrt(headDim) || t5.LRScale != 1 || t5.MaxDistance != tc.maxDistance {
			t.Errorf("%+v: std %g, scale %g, lr scale %g, max distance %d; want 1, %g, 1, %d", tc, t5.Std, t5.Scale, t5.LRScale, t5.MaxDistance, math.Sqrt(headDim), tc.maxDistance)
		}
		w := t5.Weights()[0]
		if w.Decay || w.Std != 1 || w.LRScale != 1 {
			t.Errorf("%+v: the table is declared %+v, want N(0, 1), not decayed", tc, w)
		}
		if tc.trainLen < 64 {
			continue
		}
		reached := map[int]bool{}
		for d := 0; d < tc.trainLen; d++ {
			reached[t5.Bucket(d)] = true
		}
		if len(reached) != t5.Buckets {
			t.Errorf("%+v: %d of %d buckets reached within the training length", tc, len(reached), t5.Buckets)
		}
	}
	s, err := New(Spec{DModel: 64, Heads: 4, TrainLen: 64, Config: Config{Scheme: "t5", Params: map[string]any{"init_std": 0.125, "scale": 1, "lr_scale": 10}}})
	if err != nil {
		t.Fatal(err)
	}
	if w := s.(Learner).Weights()[0]; w.Std != 0.125 || w.LRScale != 10 || s.(T5).Scale != 1 {
		t.Errorf("fields init_std, scale, lr_scale not taken: %+v, scale %g", w, s.(T5).Scale)
	}
	for _, bad := range []map[string]any{{"init_std": 0}, {"scale": -1}, {"lr_scale": 0}, {"max_distance": 0}} {
		if _, err := New(Spec{DModel: 64, Heads: 4, TrainLen: 64, Config: Config{Scheme: "t5", Params: bad}}); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}

func TestKERPLEBias(t *testing.T) {
	k := KERPLE{Heads: 2, Layers: 2}
	// Layer 1, head 0 holds r1 = 0.7, r2 = 0.3.
	w := [][]float64{{1, 1, 0.7, 1}, {1, 1, 0.3, 1}}
	b, err := k.LearnedBias(w, 1, 5)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "kerple", b.Values[:5], []float64{0, -0.18365498512724374, -0.32900254047201494, -0.4492977203206763, -0.5519201522549891})
	// Below the floor, r acts as 0.01.
	low, _ := k.LearnedBias([][]float64{{-3, 1, 1, 1}, {0.5, 1, 1, 1}}, 0, 3)
	near(t, "kerple floor", low.Values[:3], []float64{0, -0.01 * math.Log1p(0.5), -0.01 * math.Log1p(1)})
}

func TestFIREBias(t *testing.T) {
	f := FIRE{Heads: 2, Layers: 1, Hidden: 3, L0: 10}
	w := [][]float64{
		{1.5, -2.0, 0.5}, {0.1, 0.8, -0.2}, // w1, b1
		{0.3, -0.4, 0.2, 0.5, -0.7, 0.1}, {0.05, -0.05}, // w2 (hidden, heads), b2
		{0.1}, {1.0}, // c, m
	}
	b, err := f.LearnedBias(w, 0, 21)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		i, j int
		want []float64
	}{
		{0, 0, []float64{0.24000000000000005, 0.31}},
		{3, 1, []float64{0.2531517013177954, -0.11085444216945341}},
		{7, 0, []float64{0.2965533641931388, -0.5310435030622636}},
		{12, 5, []float64{0.2872994640854615, -0.4801470524700381}},
		{20, 20, []float64{0.24000000000000005, 0.31}},
		{20, 3, []float64{0.31040959027670606, -0.6072527465218831}},
	} {
		near(t, "fire", []float64{b.At(0, c.i, c.j), b.At(1, c.i, c.j)}, c.want)
	}
	// Negative c and m: ψ and the threshold use their absolute values.
	w[4][0], w[5][0] = -0.3, -0.5
	b, _ = f.LearnedBias(w, 0, 31)
	near(t, "fire negative c, m", []float64{b.At(0, 30, 2), b.At(1, 30, 2)}, []float64{0.31731274309758256, -0.6452200870367039})
}

// TestFIREBiasRow checks that FIRE's bias a query at a time, as long evaluations take it, is the
// whole bias's, bit for bit, for every head, query and range of keys, with random weights on
// either side of the threshold.
func TestFIREBiasRow(t *testing.T) {
	const n = 40
	f := FIRE{Heads: 3, Layers: 2, Hidden: 5, L0: 16}
	rng := rand.New(rand.NewPCG(3, 5))
	var w [][]float64
	for _, x := range f.Weights() {
		v := make([]float64, x.Size())
		for i := range v {
			v[i] = rng.NormFloat64()
		}
		w = append(w, v)
	}
	for layer := 0; layer < f.Layers; layer++ {
		b, err := f.LearnedBias(w, layer, n)
		if err != nil {
			t.Fatal(err)
		}
		for h := 0; h < f.Heads; h++ {
			for i := 0; i < n; i++ {
				for _, j0 := range []int{0, i / 2, i} {
					row := make([]float64, i+1-j0)
					f.LearnedBiasRow(w, layer, h, i, j0, row)
					for k, got := range row {
						if want := b.At(h, i, j0+k); got != want {
							t.Fatalf("layer %d head %d query %d key %d: row %v, whole bias %v", layer, h, i, j0+k, got, want)
						}
					}
				}
			}
		}
	}
}

// TestCheckFIRELong checks that checking FIRE at a long length does not make its heads·n²
// values: evaluation computes them a query at a time there, so a check must not need them all.
func TestCheckFIRELong(t *testing.T) {
	const n = 4096 // 4 heads: 67M values, 512 MiB in float64
	s, err := New(Spec{DModel: 16, Heads: 4, Layers: 2, TrainLen: 64, Config: Config{Scheme: "fire"}})
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if err := Check(s, n); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	if got := after.TotalAlloc - before.TotalAlloc; got > 1<<20 {
		t.Fatalf("Check(fire, %d) allocated %d bytes, want at most 1 MiB", n, got)
	}
}

// TestFIREInterpolates checks the property FIRE is built on: past the threshold, the MLP's input
// ψ(i−j)/ψ(i) stays in [0, 1], so the bias of a query's oldest key is the same value at every
// length, and a longer sequence brings no input the MLP has not seen.
func TestFIREInterpolates(t *testing.T) {
	f := FIRE{Heads: 1, Layers: 1, Hidden: 2, L0: 8}
	p := fireLayer{c: 0.1, m: 1}
	for _, i := range []int{8, 64, 1024, 1 << 16} {
		x, _, _, _ := f.input(p, i, 0)
		if math.Abs(x-1) > 1e-5 {
			t.Errorf("query %d, key 0: input %g, want 1", i, x)
		}
		if x, _, _, _ := f.input(p, i, i); x != 0 {
			t.Errorf("query %d, itself: input %g, want 0", i, x)
		}
	}
}

// TestLearnedGradients checks every scheme with weights: its hand-written gradient against
// central finite differences of its forward computation, for random weights and a random
// upstream gradient.
func TestLearnedGradients(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 2))
	const n = 9
	for _, name := range Names() {
		if name == "mix" {
			continue // its layers' schemes are the others, tested here on their own
		}
		s, err := New(Spec{DModel: 12, Heads: 3, Layers: 2, TrainLen: 6, Config: Config{Scheme: name}})
		if err != nil {
			t.Fatal(err)
		}
		l, ok := s.(Learner)
		if !ok {
			continue
		}
		if _, ok := s.(ForgetGater); ok {
			continue // the model computes its gates with its own ops (nn.LogForget), checked there
		}
		if _, ok := s.(ContextPositioner); ok {
			continue // attention counts and looks up inside its kernel, checked there
		}
		t.Run(name, func(t *testing.T) {
			var w [][]float64
			for _, x := range l.Weights() {
				v := make([]float64, x.Size())
				for i := range v {
					v[i] = 0.5 + rng.Float64() // positive, so KERPLE's floor stays out of the way
					if x.Std > 0 {
						v[i] = rng.NormFloat64()
					}
				}
				w = append(w, v)
			}
			passes := weightPasses(s, w, n)
			if len(passes) == 0 {
				t.Fatal("a scheme with weights that uses none of them")
			}
			for pi, p := range passes {
				if err := p.check(w, rng); err != nil {
					t.Fatalf("pass %d: %v", pi, err)
				}
			}
		})
	}
}

// weightPass is one use a scheme makes of its weights: forward returns its output (an embedding
// table or a layer's bias), and backward adds the weights' gradient for an output gradient dy.
type weightPass struct {
	names    []string
	forward  func() []float64
	backward func(dy []float64, dw [][]float64)
}

// weightPasses lists the passes of s over the weights w at n positions: its learned embedding
// and each of two layers' learned bias, as far as s has them.
func weightPasses(s Scheme, w [][]float64, n int) []weightPass {
	var names []string
	for _, x := range s.(Learner).Weights() {
		names = append(names, x.Name)
	}
	var passes []weightPass
	if e, ok := s.(LearnedEmbedder); ok {
		n := min(n, 6)
		passes = append(passes, weightPass{names,
			func() []float64 { t, _ := e.LearnedEmbedding(w, n); return append([]float64(nil), t.Values...) },
			func(dy []float64, dw [][]float64) { e.LearnedEmbeddingGrad(w, n, dy, dw) },
		})
	}
	if b, ok := s.(LearnedBiaser); ok {
		for layer := 0; layer < 2; layer++ {
			passes = append(passes, weightPass{names,
				func() []float64 { x, _ := b.LearnedBias(w, layer, n); return x.Values },
				func(dy []float64, dw [][]float64) { b.LearnedBiasGrad(w, layer, n, dy, dw) },
			})
		}
	}
	return passes
}

// check compares the pass's gradient for a random output gradient with central finite
// differences of its forward, weight by weight, and requires some weight to move the output.
func (p weightPass) check(w [][]float64, rng *rand.Rand) error {
	y := p.forward()
	dy := make([]float64, len(y))
	for i := range dy {
		dy[i] = rng.NormFloat64()
	}
	dw := make([][]float64, len(w))
	for i := range w {
		dw[i] = make([]float64, len(w[i]))
	}
	p.backward(dy, dw)
	moved := false
	for i := range w {
		for j := range w[i] {
			const h = 1e-6
			x := w[i][j]
			w[i][j] = x + h
			up := p.forward()
			w[i][j] = x - h
			down := p.forward()
			w[i][j] = x
			var num float64
			for k := range dy {
				num += dy[k] * (up[k] - down[k]) / (2 * h)
			}
			if math.Abs(num-dw[i][j]) > 1e-5*math.Max(1, math.Abs(num)) {
				return fmt.Errorf("weight %s[%d]: gradient %.9g, finite differences %.9g", p.names[i], j, dw[i][j], num)
			}
			moved = moved || num != 0
		}
	}
	if !moved {
		return fmt.Errorf("no weight moves the output")
	}
	return nil
}

// TestTrainingSettings checks each learned scheme's declared settings against its source: FIRE's
// listing (init_c 0.1, init_L 512 with a multiplier starting at 1), KERPLE's reference
// (torch.rand·2 and torch.rand·1, clamped at 0.01, decayed by GPT-NeoX) and nanoGPT's wpe
// (N(0, 0.02²), decayed), and that lr_scale reaches every weight.
func TestTrainingSettings(t *testing.T) {
	build := func(scheme string, params map[string]any) Learner {
		t.Helper()
		s, err := New(Spec{DModel: 16, Heads: 2, Layers: 2, TrainLen: 64, Config: Config{Scheme: scheme, Params: params}})
		if err != nil {
			t.Fatal(err)
		}
		return s.(Learner)
	}
	fire := build("fire", nil).(FIRE)
	if fire.L0 != 512 {
		t.Errorf("FIRE's threshold starts at %g, want the listing's init_L = 512", fire.L0)
	}
	for _, w := range fire.Weights() {
		want := map[string]float64{"fire.c": 0.1, "fire.m": 1}[w.Name]
		if want != 0 && (len(w.Init) != 2 || w.Init[0] != want || w.Init[1] != want) {
			t.Errorf("%s starts at %v, want %g in each layer", w.Name, w.Init, want)
		}
		if w.Decay {
			t.Errorf("%s is decayed", w.Name)
		}
	}
	if f := build("fire", map[string]any{"threshold_init": 64}).(FIRE); f.L0 != 64 {
		t.Errorf("threshold_init 64 gave %g", f.L0)
	}
	for _, w := range build("kerple", nil).Weights() {
		max := map[string]float64{"kerple.r1": 2, "kerple.r2": 1}[w.Name]
		if w.Uniform != max || w.Floor == nil || *w.Floor != 0.01 || !w.Decay || w.Std != 0 || w.Init != nil {
			t.Errorf("%s: %+v, want U(0, %g), floor 0.01, decayed", w.Name, w, max)
		}
	}
	if w := build("learned", nil).Weights()[0]; w.Std != 0.02 || !w.Decay {
		t.Errorf("wpe: %+v, want N(0, 0.02²), decayed", w)
	}
	// FoX's reference: fgate_proj = nn.Linear(hidden, heads, bias=True), N(0, 0.02²) and zeros,
	// the weight decayed and the bias not.
	fox := build("fox", nil).Weights()
	if w := fox[0]; w.Name != "fox.wf" || w.Std != 0.02 || w.Init != nil || !w.Decay || !slices.Equal(w.Dims, []int{2, 16, 2}) {
		t.Errorf("fox.wf: %+v, want (layers, d_model, heads) drawn N(0, 0.02²), decayed", w)
	}
	if w := fox[1]; w.Name != "fox.bf" || w.Std != 0 || w.Uniform != 0 || w.Init != nil || w.Decay || !slices.Equal(w.Dims, []int{2, 2}) {
		t.Errorf("fox.bf: %+v, want (layers, heads) from 0, not decayed", w)
	}
	// CoPE's reference: pos_emb = zeros(1, head_dim, npos) per layer, npos = block_size + 1,
	// trained by Adam without decay.
	cope := build("cope", nil).Weights()
	if w := cope[0]; len(cope) != 1 || w.Name != "cope.emb" || w.Std != 0 || w.Uniform != 0 || w.Init != nil || w.Decay || !slices.Equal(w.Dims, []int{2, 8, 65}) {
		t.Errorf("cope.emb: %+v, want (layers, head_dim, training length + 1) from 0, not decayed", cope)
	}
	if w := build("cope", map[string]any{"npos": 9}).Weights()[0]; w.Dims[2] != 9 {
		t.Errorf("npos 9 gave embeddings of shape %v", w.Dims)
	}
	for _, bad := range []any{0, -1, "many"} {
		if _, err := New(Spec{DModel: 16, Heads: 2, Layers: 2, TrainLen: 64, Config: Config{Scheme: "cope", Params: map[string]any{"npos": bad}}}); err == nil {
			t.Errorf("cope: npos %v accepted", bad)
		}
	}
	for _, scheme := range []string{"t5", "fire", "kerple", "learned", "fox", "cope"} {
		for _, w := range build(scheme, map[string]any{"lr_scale": 3}).Weights() {
			if w.LRScale != 3 {
				t.Errorf("%s: lr_scale 3 gave %s an lr scale of %g", scheme, w.Name, w.LRScale)
			}
		}
		for _, bad := range []any{0, -1, "fast"} {
			if _, err := New(Spec{DModel: 16, Heads: 2, Layers: 2, TrainLen: 64, Config: Config{Scheme: scheme, Params: map[string]any{"lr_scale": bad}}}); err == nil {
				t.Errorf("%s: lr_scale %v accepted", scheme, bad)
			}
		}
	}
}

// TestLearnersStateSources: every registered scheme with weights says how they are set and
// trained, with the numbers it was built with.
func TestLearnersStateSources(t *testing.T) {
	for _, name := range Names() {
		s, err := New(Spec{DModel: 16, Heads: 2, Layers: 2, TrainLen: 64, Config: Config{Scheme: name, Params: map[string]any{}}})
		if err != nil {
			continue // a scheme that needs fields of its own (mix)
		}
		if _, ok := s.(Learner); !ok {
			continue
		}
		src, ok := s.(Sourced)
		if !ok {
			t.Errorf("%s has weights but states no sources", name)
			continue
		}
		if !strings.Contains(src.Sources(), "learning rate × 1") {
			t.Errorf("%s: %q does not give its learning rate multiplier", name, src.Sources())
		}
	}
	if got := (T5{Buckets: 32, MaxDistance: 64, Std: 1, Scale: 4, LRScale: 1}).Sources(); !strings.Contains(got, "4 × a table drawn N(0, 1²)") {
		t.Errorf("T5: %q", got)
	}
	if got := (FIRE{Hidden: 32, L0: 512, LRScale: 1}).Sources(); !strings.Contains(got, "L0 = 512") {
		t.Errorf("FIRE: %q", got)
	}
}
