package model

import (
	"hash/fnv"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gorgonia.org/tensor"

	"extrapolate/internal/rng"
	"extrapolate/model/nn"
	"extrapolate/position"
)

// oneStep builds the tiny model with the scheme config pc, takes one AdamW step on a random
// batch and returns the model before and after, by parameter name.
func oneStep(t *testing.T, pc position.Config, weightDecay float64) (before, after map[string][]float64, m *Model) {
	t.Helper()
	s, err := position.New(position.Spec{DModel: tiny.DModel, Heads: tiny.Heads, Layers: tiny.Layers, TrainLen: tinyLen, Config: pc})
	if err != nil {
		t.Fatal(err)
	}
	m, err = New(tiny, s, tensor.Float64, 3)
	if err != nil {
		t.Fatal(err)
	}
	snapshot := func() map[string][]float64 {
		out := map[string][]float64{}
		for _, p := range m.Params {
			out[p.Name] = append([]float64(nil), nn.Values[float64](p.Value)...)
		}
		return out
	}
	before = snapshot()
	g, err := m.Graph(s, 2, tinyLen, Options{Train: true})
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(9, 9))
	copy(g.IDs, randomTokens(r, len(g.IDs), tiny.Vocab))
	copy(g.Targets, randomTokens(r, len(g.Targets), tiny.Vocab))
	if _, err := g.Run(); err != nil {
		t.Fatal(err)
	}
	var grads []*tensor.Dense
	for i := range m.Params {
		grads = append(grads, g.Grad(i))
	}
	opt := NewAdamW(m, Schedule{LR: 1e-3, MinLR: 1e-3, Warmup: 0, Steps: 10}, weightDecay, 0)
	if _, err := opt.Update(m.Params, grads); err != nil {
		t.Fatal(err)
	}
	return before, snapshot(), m
}

// TestLRScaleReachesOptimizer: a scheme's lr_scale multiplies the step of its own weights and of
// no other. On Adam's first step every element moves by lr·g/(|g|+ε) (bias-corrected moments),
// so ten times the learning rate is ten times the step.
func TestLRScaleReachesOptimizer(t *testing.T) {
	for _, tc := range []struct {
		scheme, weights string // the scheme and the prefix of its weights' names
	}{{"t5", "t5."}, {"fire", "fire."}, {"kerple", "kerple."}, {"learned", "wpe"}, {"fox", "fox."}} {
		b1, a1, _ := oneStep(t, position.Config{Scheme: tc.scheme}, 0)
		b10, a10, _ := oneStep(t, position.Config{Scheme: tc.scheme, Params: map[string]any{"lr_scale": 10}}, 0)
		for name := range a1 {
			ratio, own := 1.0, strings.HasPrefix(name, tc.weights)
			if own {
				ratio = 10
			}
			moved := 0
			for i := range a1[name] {
				d1, d10 := a1[name][i]-b1[name][i], a10[name][i]-b10[name][i]
				// A weight whose gradient is zero but for rounding (FIRE's output bias: a
				// constant added to a query's every score) moves by a few ulps, which its
				// rounding decides.
				if math.Abs(d1) < 1e-12 && math.Abs(d10) < 1e-11 {
					continue
				}
				moved++
				if math.Abs(d10-ratio*d1) > 1e-9*math.Abs(d10)+1e-15 {
					t.Fatalf("%s: %s[%d] moved %g with lr_scale 10 and %g without, want %g times", tc.scheme, name, i, d10, d1, ratio)
				}
			}
			if own && moved == 0 && name != "fire.b2" {
				t.Fatalf("%s: %s did not move", tc.scheme, name)
			}
		}
	}
}

// TestKERPLEDrawsAndFloor: r1 and r2 start as U(0, 2) and U(0, 1) draws raised to 0.01, are
// decayed, and stay at or above 0.01 after an update, as the reference clamps them in place.
func TestKERPLEDrawsAndFloor(t *testing.T) {
	_, _, m := oneStep(t, position.Config{Scheme: "kerple"}, 0.1)
	for _, p := range m.Params {
		if p.Name != "kerple.r1" && p.Name != "kerple.r2" {
			continue
		}
		if !p.Decay || p.Floor == nil || *p.Floor != 0.01 {
			t.Errorf("%s: decay %v, floor %v; want decayed, floor 0.01", p.Name, p.Decay, p.Floor)
		}
		// Push a value below the floor and step again: the update must clamp it.
		nn.Values[float64](p.Value)[0] = -3
		p.clamp()
		if v := nn.Values[float64](p.Value)[0]; v != 0.01 {
			t.Errorf("%s: clamped to %g, want 0.01", p.Name, v)
		}
	}
	// The draws: U(0, max) from the model's generator, checked by their moments over many draws
	// (mean max/2, variance max²/12).
	d := normals{rng.SplitMix64{State: 1}}
	x := nn.Values[float64](d.uniform([]int{100000}, 2))
	var sum, sq float64
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range x {
		sum, sq = sum+v, sq+v*v
		lo, hi = min(lo, v), max(hi, v)
	}
	mean := sum / float64(len(x))
	variance := sq/float64(len(x)) - mean*mean
	if lo < 0 || hi >= 2 || math.Abs(mean-1) > 0.01 || math.Abs(variance-4.0/12) > 0.01 {
		t.Errorf("U(0, 2) draws: range [%g, %g], mean %g, variance %g; want [0, 2), 1, 0.333", lo, hi, mean, variance)
	}
}

// TestLogNTrainIsFixedSSMax: log-length scaled attention (logits times log(i+1)) is
// Scalable-Softmax with every s at 1, so the two give the same loss on the same weights.
func TestLogNTrainIsFixedSSMax(t *testing.T) {
	s, err := position.New(position.Spec{DModel: tiny.DModel, Heads: tiny.Heads, Layers: tiny.Layers, TrainLen: tinyLen, Config: position.Config{Scheme: "rope"}})
	if err != nil {
		t.Fatal(err)
	}
	loss := func(scale string, n int) float64 {
		c := tiny
		c.Attention, c.TrainLen = Attention{Scale: scale}, tinyLen
		m, err := New(c, s, tensor.Float64, 5)
		if err != nil {
			t.Fatal(err)
		}
		// s at 1, and the other weights larger than their initial 0.02 (the same for each
		// model, drawn by name), so that the scores' scale matters.
		for _, p := range m.Params {
			v := nn.Values[float64](p.Value)
			if strings.HasSuffix(p.Name, "ssmax") {
				for i := range v {
					v[i] = 1
				}
				continue
			}
			h := fnv.New64a()
			h.Write([]byte(p.Name))
			r := rand.New(rand.NewPCG(h.Sum64(), 1))
			for i := range v {
				v[i] += 0.5 * r.NormFloat64()
			}
		}
		g, err := m.Graph(s, 1, n, Options{})
		if err != nil {
			t.Fatal(err)
		}
		r := rand.New(rand.NewPCG(1, 1))
		copy(g.IDs, randomTokens(r, n, c.Vocab))
		copy(g.Targets, randomTokens(r, n, c.Vocab))
		l, err := g.Run()
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	for _, n := range []int{tinyLen, 3 * tinyLen} {
		a, b := loss("logn_train", n), loss("ssmax", n)
		if math.Abs(a-b) > 1e-12 {
			t.Errorf("%d tokens: logn_train %v, ssmax with s = 1 %v", n, a, b)
		}
		if plain := loss("", n); math.Abs(a-plain) < 1e-6 {
			t.Errorf("%d tokens: logn_train left the loss at %v", n, a)
		}
	}
}
