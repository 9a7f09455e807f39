package model

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gorgonia.org/tensor"

	"extrapolate/model/nn"
	"extrapolate/position"
)

// tiny is a model small enough to check every weight by finite differences.
var tiny = Config{DModel: 8, Layers: 2, Heads: 2, Vocab: 11}

const tinyLen = 5

// schemes builds each registered scheme for the tiny model, with RoPE also interleaved and
// scaled, so that every variant goes through the same checks.
func schemes(t *testing.T, c Config, trainLen int) map[string]position.Scheme {
	t.Helper()
	configs := map[string]position.Config{
		"rope-interleaved": {Scheme: "rope", Params: map[string]any{"pairing": "interleaved"}},
		"rope-yarn":        {Scheme: "rope", Scaling: &position.Scaling{Type: "yarn", Factor: position.Factor{Value: 4}}},
		"rope-partial":     {Scheme: "rope", Params: map[string]any{"rotary_fraction": 0.5}},
		"p-rope":           {Scheme: "rope", Params: map[string]any{"frequency_fraction": 0.5}},
		"xpos-llama3":      {Scheme: "xpos", Params: map[string]any{"scale_base": 4}, Scaling: &position.Scaling{Type: "llama3", Factor: position.Factor{Value: 2}}},
	}
	for _, n := range position.Names() {
		configs[n] = position.Config{Scheme: n}
	}
	// A mix of a rotation, a learned bias and nothing, repeated over the layers.
	configs["mix"] = position.Config{Scheme: "mix", Params: map[string]any{"layers": []any{"xpos", map[string]any{"scheme": "kerple"}}}}
	// Forget gates in one layer only, with weights of their own (hL.fox.wf, one layer's).
	configs["mix-fox"] = position.Config{Scheme: "mix", Params: map[string]any{"layers": []any{"rope", "fox"}}}
	// Stick-breaking in one layer, the softmax in the other; and attending to the current token.
	configs["mix-stickbreaking"] = position.Config{Scheme: "mix", Params: map[string]any{"layers": []any{"rope", "stickbreaking"}}}
	configs["stickbreaking-current"] = position.Config{Scheme: "stickbreaking", Params: map[string]any{"attend_current": true}}
	// Contextual positions in one layer only, clamped past 3 (hL.cope.emb, one layer's).
	configs["mix-cope"] = position.Config{Scheme: "mix", Params: map[string]any{"layers": []any{"rope", map[string]any{"scheme": "cope", "npos": 3}}}}
	out := map[string]position.Scheme{}
	for name, pc := range configs {
		s, err := position.New(position.Spec{DModel: c.DModel, Heads: c.Heads, Layers: c.Layers, TrainLen: trainLen, Config: pc})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out[name] = s
	}
	return out
}

// variant is a model config with a scheme.
type variant struct {
	config Config
	scheme position.Scheme
}

// variants are the tiny model with every scheme, with each attention temperature (log-n
// scaling at a training length of 2, so that it acts within the tiny sequences, and
// Scalable-Softmax), and with softpick in place of the softmax: with RoPE, with T5's learned
// bias, and with KERPLE's under Scalable-Softmax's learned query scale; and gated attention,
// element-wise with RoPE, head-wise with ALiBi under softpick and with FoX; and sinks, with RoPE
// and with T5's learned bias under Scalable-Softmax.
func variants(t *testing.T) map[string]variant {
	out := map[string]variant{}
	for name, s := range schemes(t, tiny, tinyLen) {
		out[name] = variant{tiny, s}
	}
	logn, ssmax := tiny, tiny
	logn.Attention, logn.TrainLen = Attention{Scale: "logn"}, 2
	ssmax.Attention, ssmax.TrainLen = Attention{Scale: "ssmax"}, tinyLen
	out["rope+logn"] = variant{logn, out["rope"].scheme}
	lognTrain := tiny
	lognTrain.Attention, lognTrain.TrainLen = Attention{Scale: "logn_train"}, tinyLen
	out["alibi+logn_train"] = variant{lognTrain, out["alibi"].scheme}
	out["kerple+ssmax"] = variant{ssmax, out["kerple"].scheme}
	out["nope+ssmax"] = variant{ssmax, out["nope"].scheme}
	out["stickbreaking+ssmax"] = variant{ssmax, out["stickbreaking"].scheme}
	softpick, softpickSSMax := tiny, ssmax
	softpick.Attention.Normaliser, softpickSSMax.Attention.Normaliser = Softpick, Softpick
	out["rope+softpick"] = variant{softpick, out["rope"].scheme}
	out["t5+softpick"] = variant{softpick, out["t5"].scheme}
	out["kerple+ssmax+softpick"] = variant{softpickSSMax, out["kerple"].scheme}
	elementwise, headwise := tiny, softpick
	elementwise.Attention.Gate, headwise.Attention.Gate = Elementwise, Headwise
	out["rope+gate"] = variant{elementwise, out["rope"].scheme}
	out["alibi+softpick+gate_headwise"] = variant{headwise, out["alibi"].scheme}
	out["fox+gate_headwise"] = variant{func() Config { c := tiny; c.Attention.Gate = Headwise; return c }(), out["fox"].scheme}
	sinks, sinksSSMax := tiny, ssmax
	sinks.Attention.Sinks, sinksSSMax.Attention.Sinks = true, true
	out["rope+sinks"] = variant{sinks, out["rope"].scheme}
	out["t5+ssmax+sinks"] = variant{sinksSSMax, out["t5"].scheme}
	return out
}

func randomTokens(rng *rand.Rand, n, vocab int) []int {
	x := make([]int, n)
	for i := range x {
		x[i] = rng.IntN(vocab)
	}
	return x
}

// TestGradientsMatchFiniteDifferences checks the gradient of the whole model, every weight of
// it, against central differences in float64, for every scheme.
func TestGradientsMatchFiniteDifferences(t *testing.T) {
	for name, v := range variants(t) {
		t.Run(name, func(t *testing.T) {
			s, c := v.scheme, v.config
			m, err := New(c, s, tensor.Float64, 7)
			if err != nil {
				t.Fatal(err)
			}
			// Larger weights than the initial 0.02 make every path through the model matter.
			rng := rand.New(rand.NewPCG(3, 4))
			for _, p := range m.Params {
				for i := range nn.Values[float64](p.Value) {
					nn.Values[float64](p.Value)[i] += 0.3 * rng.NormFloat64()
				}
			}
			g, err := m.Graph(s, 2, tinyLen, Options{Train: true})
			if err != nil {
				t.Fatal(err)
			}
			copy(g.IDs, randomTokens(rng, len(g.IDs), c.Vocab))
			copy(g.Targets, randomTokens(rng, len(g.Targets), c.Vocab))
			if _, err := g.Run(); err != nil {
				t.Fatal(err)
			}
			var grads [][]float64
			for i := range m.Params {
				grads = append(grads, append([]float64(nil), nn.Values[float64](g.Grad(i))...))
			}
			const h = 1e-6
			worst := 0.0
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
					rel := math.Abs(grads[i][e]-fd) / math.Max(1, math.Abs(fd))
					worst = math.Max(worst, rel)
					if rel > 1e-6 {
						t.Fatalf("%s[%d]: gradient %.10g, finite difference %.10g", p.Name, e, grads[i][e], fd)
					}
				}
			}
			t.Logf("%d weights, worst relative error %.2g", m.NumParams(), worst)
		})
	}
}

// TestFusedMatchesStockOps runs the model built from fused ops and from gorgonia's stock ops on
// the same batch: the losses and every gradient must agree, with every target scored and with
// a third of them left out (a task's loss mask).
func TestFusedMatchesStockOps(t *testing.T) {
	for name, v := range variants(t) {
		t.Run(name, func(t *testing.T) { fusedMatchesStockOps(t, v, false) })
		t.Run(name+"/masked", func(t *testing.T) { fusedMatchesStockOps(t, v, true) })
	}
}

func fusedMatchesStockOps(t *testing.T, v variant, masked bool) {
	s, c := v.scheme, v.config
	m, err := New(c, s, tensor.Float64, 9)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for _, p := range m.Params {
		for i := range nn.Values[float64](p.Value) {
			nn.Values[float64](p.Value)[i] += 0.3 * rng.NormFloat64()
		}
	}
	ids, targets := randomTokens(rng, 3*tinyLen, c.Vocab), randomTokens(rng, 3*tinyLen, c.Vocab)
	if masked {
		for i := 0; i < len(targets); i += 3 {
			targets[i] = -1
		}
	}
	var losses [2]float64
	var grads [2][][]float64
	for i, stockOps := range []bool{false, true} {
		g, err := m.Graph(s, 3, tinyLen, Options{Train: true, StockOps: stockOps})
		if err != nil {
			t.Fatal(err)
		}
		copy(g.IDs, ids)
		copy(g.Targets, targets)
		if losses[i], err = g.Run(); err != nil {
			t.Fatal(err)
		}
		for j := range m.Params {
			grads[i] = append(grads[i], append([]float64(nil), nn.Values[float64](g.Grad(j))...))
		}
	}
	if math.Abs(losses[0]-losses[1]) > 1e-10 {
		t.Fatalf("loss: fused %.15g, stock ops %.15g", losses[0], losses[1])
	}
	for j, p := range m.Params {
		for e := range grads[0][j] {
			if math.Abs(grads[0][j][e]-grads[1][j][e]) > 1e-10 {
				t.Fatalf("%s[%d]: fused %.15g, stock ops %.15g", p.Name, e, grads[0][j][e], grads[1][j][e])
			}
		}
	}
}

// TestCausal changes one token and checks that no earlier position's logits move, for every
// scheme, and that a later one does (else the test could not fail).
func TestCausal(t *testing.T) {
	const n = 12
	for name, s := range schemes(t, tiny, n) {
		t.Run(name, func(t *testing.T) {
			m, err := New(tiny, s, tensor.Float64, 11)
			if err != nil {
				t.Fatal(err)
			}
			g, err := m.Graph(s, 1, n, Options{})
			if err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(7, 8))
			copy(g.IDs, randomTokens(rng, n, tiny.Vocab))
			if _, err := g.Run(); err != nil {
				t.Fatal(err)
			}
			before := append([]float64(nil), nn.Values[float64](g.Logits())...)
			for j := 1; j < n; j++ {
				g.IDs[j] = (g.IDs[j] + 1) % tiny.Vocab
				if _, err := g.Run(); err != nil {
					t.Fatal(err)
				}
				after := nn.Values[float64](g.Logits())
				v := tiny.Vocab
				for i := 0; i < j*v; i++ {
					if after[i] != before[i] {
						t.Fatalf("changing token %d moved the logits of position %d", j, i/v)
					}
				}
				moved := false
				for i := j * v; i < (j+1)*v; i++ {
					moved = moved || after[i] != before[i]
				}
				if !moved {
					t.Fatalf("changing token %d did not move its own logits", j)
				}
				copy(before, after)
			}
		})
	}
}

// TestOverfitsTinyBatch trains on one fixed batch: the loss must fall far below its start.
func TestOverfitsTinyBatch(t *testing.T) {
	c := Config{DModel: 32, Layers: 2, Heads: 4, Vocab: 256}
	const n = 16
	for _, name := range []string{"rope", "alibi", "learned"} {
		t.Run(name, func(t *testing.T) {
			s, err := position.New(position.Spec{DModel: c.DModel, Heads: c.Heads, Layers: c.Layers, TrainLen: n, Config: position.Config{Scheme: name}})
			if err != nil {
				t.Fatal(err)
			}
			m, err := New(c, s, tensor.Float32, 1)
			if err != nil {
				t.Fatal(err)
			}
			g, err := m.Graph(s, 4, n, Options{Train: true})
			if err != nil {
				t.Fatal(err)
			}
			text := []byte("the quick brown fox jumps over the lazy dog, again and again and again!")
			for b := 0; b < 4; b++ {
				for i := 0; i < n; i++ {
					g.IDs[b*n+i] = int(text[b*n+i])
					g.Targets[b*n+i] = int(text[b*n+i+1])
				}
			}
			opt := NewAdamW(m, Schedule{LR: 3e-3, MinLR: 3e-3, Warmup: 10, Steps: 300}, 0, 1)
			var first, last float64
			for step := 0; step < 300; step++ {
				loss, err := g.Run()
				if err != nil {
					t.Fatal(err)
				}
				if step == 0 {
					first = loss
				}
				last = loss
				if _, err := opt.Update(m.Params, grads(g, len(m.Params))); err != nil {
					t.Fatal(err)
				}
			}
			t.Logf("loss %.3f -> %.4f", first, last)
			if first < math.Log(256)-0.1 || last > 0.05 {
				t.Fatalf("loss %.3f -> %.4f: the model did not memorise one batch", first, last)
			}
		})
	}
}

func grads(g *Graph, n int) []*tensor.Dense {
	out := make([]*tensor.Dense, n)
	for i := range out {
		out[i] = g.Grad(i)
	}
	return out
}

// TestDeterministic trains twice from the same seed: the losses must be identical bit for bit.
func TestDeterministic(t *testing.T) {
	c := Config{DModel: 16, Layers: 1, Heads: 2, Vocab: 256}
	const n = 8
	run := func() []float64 {
		s, err := position.New(position.Spec{DModel: c.DModel, Heads: c.Heads, Layers: c.Layers, TrainLen: n, Config: position.Config{Scheme: "rope"}})
		if err != nil {
			t.Fatal(err)
		}
		m, err := New(c, s, tensor.Float32, 42)
		if err != nil {
			t.Fatal(err)
		}
		g, err := m.Graph(s, 8, n, Options{Train: true})
		if err != nil {
			t.Fatal(err)
		}
		opt := NewAdamW(m, Schedule{LR: 1e-2, MinLR: 1e-3, Warmup: 2, Steps: 20}, 0.1, 1)
		rng := rand.New(rand.NewPCG(1, 1))
		var losses []float64
		for step := 0; step < 20; step++ {
			copy(g.IDs, randomTokens(rng, len(g.IDs), 256))
			copy(g.Targets, randomTokens(rng, len(g.Targets), 256))
			loss, err := g.Run()
			if err != nil {
				t.Fatal(err)
			}
			losses = append(losses, loss)
			if _, err := opt.Update(m.Params, grads(g, len(m.Params))); err != nil {
				t.Fatal(err)
			}
		}
		return losses
	}
	a, b := run(), run()
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			t.Fatalf("step %d: loss %.17g then %.17g", i+1, a[i], b[i])
		}
	}
	if a[0] == a[len(a)-1] {
		t.Fatal("the loss never changed: the test would pass whatever the model did")
	}
}

func TestNotApplicablePastLearnedTable(t *testing.T) {
	s, err := position.New(position.Spec{DModel: 8, Heads: 2, TrainLen: 4, Config: position.Config{Scheme: "learned"}})
	if err != nil {
		t.Fatal(err)
	}
	m, err := New(tiny, s, tensor.Float32, 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Graph(s, 1, 4, Options{}); err != nil {
		t.Fatalf("at the table's length: %v", err)
	}
	_, err = m.Graph(s, 1, 8, Options{})
	if !IsNotApplicable(err) || !errors.Is(err, position.ErrNotApplicable) {
		t.Fatalf("past the table: %v, want not applicable", err)
	}
}

// TestFloat32MatchesFloat64 runs the same weights and batch in float32, where the kernels use
// the assembly matrix product, GELU and fast exp, and in float64, which the gradient checks
// validate: loss and gradients must agree to float32 precision.
func TestFloat32MatchesFloat64(t *testing.T) {
	const n = 13
	for _, scheme := range []string{"rope", "alibi", "learned", "fox", "stickbreaking", "cope"} {
		t.Run(scheme, func(t *testing.T) {
			// Odd sizes leave remainders for the vector loops (an odd width where RoPE allows).
			c := Config{DModel: 21, Layers: 2, Heads: 3, Vocab: 37}
			if scheme == "rope" {
				c.DModel = 24
			}
			s, err := position.New(position.Spec{DModel: c.DModel, Heads: c.Heads, Layers: c.Layers, TrainLen: n, Config: position.Config{Scheme: scheme}})
			if err != nil {
				t.Fatal(err)
			}
			m64, _ := New(c, s, tensor.Float64, 3)
			m32, _ := New(c, s, tensor.Float32, 3)
			rng := rand.New(rand.NewPCG(9, 9))
			for i, p := range m64.Params {
				w := nn.Values[float64](p.Value)
				for j := range w {
					w[j] += 0.3 * rng.NormFloat64()
					nn.Values[float32](m32.Params[i].Value)[j] = float32(w[j])
				}
			}
			ids, targets := randomTokens(rng, 5*n, c.Vocab), randomTokens(rng, 5*n, c.Vocab)
			g64, err := m64.Graph(s, 5, n, Options{Train: true})
			if err != nil {
				t.Fatal(err)
			}
			g32, err := m32.Graph(s, 5, n, Options{Train: true})
			if err != nil {
				t.Fatal(err)
			}
			copy(g64.IDs, ids)
			copy(g64.Targets, targets)
			copy(g32.IDs, ids)
			copy(g32.Targets, targets)
			l64, _ := g64.Run()
			l32, _ := g32.Run()
			if math.Abs(l64-l32) > 2e-5*l64 {
				t.Fatalf("loss: float64 %.9g, float32 %.9g", l64, l32)
			}
			for i, p := range m64.Params {
				a, b := nn.Values[float64](g64.Grad(i)), nn.Values[float32](g32.Grad(i))
				var num, den float64
				for j := range a {
					num += (a[j] - float64(b[j])) * (a[j] - float64(b[j]))
					den += a[j] * a[j]
				}
				if math.Sqrt(num) > 1e-4*math.Sqrt(den)+1e-7 {
					t.Fatalf("%s: float32 gradient off by %.2g relative", p.Name, math.Sqrt(num/den))
				}
			}
		})
	}
}

// TestTemperatureActs checks that the attention temperature reaches the scores: log-n scaling
// changes the loss of the same weights only where queries pass the training length, and
// Scalable-Softmax adds a weight per layer that starts at 1/log(L).
func TestTemperatureActs(t *testing.T) {
	s := schemes(t, tiny, tinyLen)["rope"]
	loss := func(c Config, n int) float64 {
		m, err := New(c, s, tensor.Float64, 5)
		if err != nil {
			t.Fatal(err)
		}
		g, err := m.Graph(s, 1, n, Options{})
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(1, 1))
		copy(g.IDs, randomTokens(rng, n, c.Vocab))
		copy(g.Targets, randomTokens(rng, n, c.Vocab))
		l, err := g.Run()
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	logn := tiny
	logn.Attention, logn.TrainLen = Attention{Scale: "logn"}, tinyLen
	if a, b := loss(tiny, tinyLen), loss(logn, tinyLen); a != b {
		t.Errorf("at the training length: %v without log-n scaling, %v with it; want the same", a, b)
	}
	if a, b := loss(tiny, 3*tinyLen), loss(logn, 3*tinyLen); a == b {
		t.Errorf("past the training length: log-n scaling left the loss at %v", a)
	}
	ssmax := tiny
	ssmax.Attention, ssmax.TrainLen = Attention{Scale: "ssmax"}, tinyLen
	m, err := New(ssmax, s, tensor.Float64, 5)
	if err != nil {
		t.Fatal(err)
	}
	for l := 0; l < tiny.Layers; l++ {
		p := m.Param(fmt.Sprintf("h%d.ssmax", l))
		if p == nil || p.Decay || math.Abs(nn.Values[float64](p.Value)[0]-1/math.Log(tinyLen)) > 1e-15 {
			t.Fatalf("layer %d: ssmax weight %+v", l, p)
		}
	}
	bad := tiny
	bad.Attention = Attention{Scale: "cold"}
	if err := bad.Check(); err == nil || !strings.HasPrefix(err.Error(), "attention.scale") {
		t.Errorf("unknown scale: %v", err)
	}
}

// TestNormaliser checks the attention section's normaliser: softpick changes the loss from the
// softmax's, an unknown one is refused naming the field, and so is softpick with a scheme that
// replaces the softmax itself.
func TestNormaliser(t *testing.T) {
	all := schemes(t, tiny, tinyLen)
	loss := func(c Config) float64 {
		s := all["rope"]
		m, err := New(c, s, tensor.Float64, 5)
		if err != nil {
			t.Fatal(err)
		}
		g, err := m.Graph(s, 1, tinyLen, Options{})
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(1, 1))
		copy(g.IDs, randomTokens(rng, tinyLen, c.Vocab))
		copy(g.Targets, randomTokens(rng, tinyLen, c.Vocab))
		l, err := g.Run()
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	softmax, softpick := tiny, tiny
	softmax.Attention.Normaliser, softpick.Attention.Normaliser = Softmax, Softpick
	if a, b := loss(tiny), loss(softmax); a != b {
		t.Errorf("normaliser softmax: loss %v, %v without; want the same", b, a)
	}
	if a, b := loss(tiny), loss(softpick); a == b {
		t.Errorf("normaliser softpick left the loss at the softmax's %v", a)
	}
	bad := tiny
	bad.Attention.Normaliser = "softmin"
	if err := bad.Check(); err == nil || !strings.HasPrefix(err.Error(), "attention.normaliser") {
		t.Errorf("unknown normaliser: %v", err)
	}
	if _, err := New(softpick, all["stickbreaking"], tensor.Float64, 5); err == nil || !strings.Contains(err.Error(), "attention.normaliser: softpick replaces the softmax") {
		t.Errorf("softpick with stick-breaking: %v", err)
	}
	if _, err := New(softpick, all["fox"], tensor.Float64, 5); err == nil || !strings.Contains(err.Error(), "forget gates") {
		t.Errorf("softpick with forget gates: %v", err)
	}
	// A window takes the masked path, which folds softpick's sums (nn.TestSoftpickMasked).
	windowed := mapped(t, position.Config{Scheme: "mix", Params: map[string]any{"layers": []any{map[string]any{"scheme": "rope", "window": 2}, "rope"}}}, tinyLen)
	if _, err := New(softpick, windowed, tensor.Float64, 5); err != nil {
		t.Errorf("softpick with a window: %v", err)
	}
}

// TestGate checks gated attention's property at its simplest: with the gate's weights and bias
// at 0 every gate is σ(0) = ½, element-wise and head-wise alike, so the loss is that of the
// ungated model with the same other weights, the gated one's output projection doubled. An
// unknown gate is refused naming the field.
func TestGate(t *testing.T) {
	s := schemes(t, tiny, tinyLen)["rope"]
	loss := batchLoss(t, s, rand.New(rand.NewPCG(2, 3)))
	ungated, err := New(tiny, s, tensor.Float64, 5)
	if err != nil {
		t.Fatal(err)
	}
	for _, gate := range []string{Elementwise, Headwise} {
		c := tiny
		c.Attention.Gate = gate
		gated, err := New(c, s, tensor.Float64, 6)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range ungated.Params {
			copy(nn.Values[float64](gated.Param(p.Name).Value), nn.Values[float64](p.Value))
		}
		for l := 0; l < tiny.Layers; l++ {
			clear(nn.Values[float64](gated.Param(fmt.Sprintf("h%d.wg", l)).Value))
			for i := range nn.Values[float64](gated.Param(fmt.Sprintf("h%d.wo", l)).Value) {
				nn.Values[float64](gated.Param(fmt.Sprintf("h%d.wo", l)).Value)[i] *= 2
			}
		}
		if got, want := loss(gated), loss(ungated); math.Abs(got-want) > 1e-12 {
			t.Errorf("%s gate at 0 with wo doubled: loss %.15g, ungated %.15g", gate, got, want)
		}
	}
	bad := tiny
	bad.Attention.Gate = "sideways"
	if err := bad.Check(); err == nil || !strings.HasPrefix(err.Error(), "attention.gate") {
		t.Errorf("unknown gate: %v", err)
	}
}

// TestSinks checks the sink logits: at −1000 every sink's share is 0, so the loss is the model's
// without sinks with the same other weights, plainly and with a sliding window on a layer
// (gpt-oss's banded layers); at 0 it is not; and the schemes and settings the op takes no sinks
// with are refused naming attention.sinks.
func TestSinks(t *testing.T) {
	all := schemes(t, tiny, tinyLen)
	windowed := mapped(t, position.Config{Scheme: "mix", Params: map[string]any{"layers": []any{map[string]any{"scheme": "rope", "window": 2}, "rope"}}}, tinyLen)
	for name, s := range map[string]position.Scheme{"rope": all["rope"], "windowed": windowed} {
		t.Run(name, func(t *testing.T) { sinksAgree(t, s) })
	}
	c := tiny
	c.Attention.Sinks = true
	s := all["rope"]
	softpick := c
	softpick.Attention.Normaliser = Softpick
	for name, bad := range map[string]struct {
		c Config
		s position.Scheme
	}{"softpick": {softpick, s}, "fox": {c, all["fox"]}, "stickbreaking": {c, all["stickbreaking"]}, "cope": {c, all["cope"]}} {
		if _, err := New(bad.c, bad.s, tensor.Float64, 1); err == nil || !strings.HasPrefix(err.Error(), "attention.sinks") {
			t.Errorf("sinks with %s: %v, want an error naming attention.sinks", name, err)
		}
	}
}

// sinksAgree checks that a model with scheme s and sinks at −1000 has the loss of the same
// model without sinks, and that sinks at 0 change it.
func sinksAgree(t *testing.T, s position.Scheme) {
	loss := batchLoss(t, s, rand.New(rand.NewPCG(3, 3)))
	plain, err := New(tiny, s, tensor.Float64, 5)
	if err != nil {
		t.Fatal(err)
	}
	c := tiny
	c.Attention.Sinks = true
	sunk, err := New(c, s, tensor.Float64, 6)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range plain.Params {
		copy(nn.Values[float64](sunk.Param(p.Name).Value), nn.Values[float64](p.Value))
	}
	set := func(v float64) {
		for l := 0; l < tiny.Layers; l++ {
			for i := range nn.Values[float64](sunk.Param(fmt.Sprintf("h%d.sinks", l)).Value) {
				nn.Values[float64](sunk.Param(fmt.Sprintf("h%d.sinks", l)).Value)[i] = v
			}
		}
	}
	set(-1000)
	if got, want := loss(sunk), loss(plain); math.Abs(got-want) > 1e-12 {
		t.Errorf("sinks at -1000: loss %.15g, without sinks %.15g", got, want)
	}
	set(0)
	if got, want := loss(sunk), loss(plain); got == want {
		t.Errorf("sinks at 0 left the loss at %v", got)
	}
}

// batchLoss returns what computes a model's training loss, with the scheme s, on one batch of two
// tiny sequences drawn from rng: the same batch for every model it is given.
func batchLoss(t *testing.T, s position.Scheme, rng *rand.Rand) func(m *Model) float64 {
	ids, targets := randomTokens(rng, 2*tinyLen, tiny.Vocab), randomTokens(rng, 2*tinyLen, tiny.Vocab)
	return func(m *Model) float64 {
		t.Helper()
		g, err := m.Graph(s, 2, tinyLen, Options{Train: true})
		if err != nil {
			t.Fatal(err)
		}
		copy(g.IDs, ids)
		copy(g.Targets, targets)
		l, err := g.Run()
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
}
