package softcap_test

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	_ "extrapolate/examples/softcap"
	"extrapolate/internal/stepcheck"
	"extrapolate/internal/trainbench"
	"extrapolate/model"
	"extrapolate/position"
)

const heads, n, batch = stepcheck.Heads, stepcheck.N, stepcheck.Batch

func scheme(t *testing.T, params map[string]any) position.Scheme {
	return stepcheck.Scheme(t, position.Config{Scheme: "softcap", Params: params})
}

// TestScores checks the stage against Gemma 2's formula computed here, c·tanh(s/c) with each
// row's head's cap, on scores of both signs and beyond the cap, with fixed and learned caps.
func TestScores(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	in := make([]float64, batch*heads*n*n)
	for i := range in {
		in[i] = 8 * rng.NormFloat64()
	}
	for _, c := range []struct {
		params map[string]any
		caps   []float64
	}{{map[string]any{"cap": 5.0}, []float64{5, 5}}, {map[string]any{"learn": true}, []float64{3, 0.5}}} {
		s := scheme(t, c.params)
		g := G.NewGraph()
		scores := G.NewTensor(g, tensor.Float64, 3, G.WithShape(batch*heads, n, n), G.WithName("scores"),
			G.WithValue(tensor.New(tensor.WithShape(batch*heads, n, n), tensor.WithBacking(append([]float64(nil), in...)))))
		var w []*G.Node
		if len(position.WeightsOf(s)) > 0 {
			w = []*G.Node{G.NewVector(g, tensor.Float64, G.WithShape(heads), G.WithName("cap"), G.WithValue(tensor.New(tensor.WithBacking(append([]float64(nil), c.caps...)))))}
		}
		out, err := position.ScoresGraph(s, g, w, 0, heads, n)(scores)
		if err != nil {
			t.Fatal(err)
		}
		vm := G.NewTapeMachine(g)
		if err := vm.RunAll(); err != nil {
			t.Fatal(err)
		}
		vm.Close()
		got := out.Value().Data().([]float64)
		for i, x := range in {
			cp := c.caps[(i/(n*n))%heads]
			if want := cp * math.Tanh(x/cp); math.Abs(got[i]-want) > 1e-12 {
				t.Fatalf("%v: score %d: %v, want %v", c.params, i, got[i], want)
			}
		}
	}
}

// TestDecomposedMatchesFused: with a cap of 10⁶, c·tanh(s/c) is s to 10⁻¹⁰ relative at these
// scores, so a model whose layers run on the stock ops with the stage has the loss and the
// gradients of the same model with NoPE on the fused op, to 10⁻⁹ of each gradient's norm (or
// of 10⁻⁶, for the keys' biases, whose gradient is 0 but for rounding: a bias on every key
// moves a row's scores alike); with a cap of 10⁻⁵, below the scores of a freshly drawn model
// (about 10⁻⁴), it does not. In float64.
func TestDecomposedMatchesFused(t *testing.T) {
	want := stepcheck.Run(t, stepcheck.Scheme(t, position.Config{Scheme: "nope"}), nil)
	got := stepcheck.Run(t, scheme(t, map[string]any{"cap": 1e6}), nil)
	stepcheck.Same(t, got, want, "through the stage")
	if capped := stepcheck.Run(t, scheme(t, map[string]any{"cap": 1e-5}), nil); math.Abs(capped.Loss-want.Loss) < 1e-9 {
		t.Errorf("a cap of 1e-5 leaves the loss at %v, NoPE's %v", capped.Loss, want.Loss)
	}
}

// TestCapGradient checks gorgonia's gradient of the loss to each learned cap against central
// finite differences of the model's loss, in float64, at caps of 2·10⁻⁴, about the scores of a
// freshly drawn model, where tanh bends them.
func TestCapGradient(t *testing.T) {
	s := scheme(t, map[string]any{"learn": true, "cap": 2e-4})
	g, ok := stepcheck.Run(t, s, nil).Grads["softcap.cap"]
	if !ok {
		t.Fatal("no gradient for softcap.cap")
	}
	for i := range g {
		fd := stepcheck.FiniteDifference(t, s, "softcap.cap", i, 1e-7)
		if math.Abs(g[i]-fd) > 1e-7*math.Max(1, math.Abs(fd)) {
			t.Errorf("cap %d: gradient %.10g, finite difference %.10g", i, g[i], fd)
		}
	}
	if g[0] == 0 && g[1] == 0 {
		t.Error("the caps' gradient is 0: the check cannot fail")
	}
}

// TestTrains runs the stage through the whole protocol (stepcheck.Train), each length's layers
// on the stock ops, with learned caps, which move from 0.5.
func TestTrains(t *testing.T) {
	w := stepcheck.Train(t, position.Config{Scheme: "softcap", Params: map[string]any{"cap": 0.5, "learn": true}})
	if len(w) != 1 || len(w[0]) != 2 {
		t.Fatalf("the checkpoint holds scheme weights %v, want a cap per head", w)
	}
	for h, c := range w[0] {
		if float32(c) == 0.5 {
			t.Errorf("head %d's cap is still 0.5 after 30 steps", h)
		}
	}
}

// BenchmarkTrainStep times a training step (forward, backward and AdamW) of the comparison's
// model (width 64, 2 layers, 4 heads, 16 sequences of 64 tokens) with the stage, on the stock
// ops, against NoPE on the fused op: the cost of the decomposed path.
func BenchmarkTrainStep(b *testing.B) {
	b.Run("nope_fused", func(b *testing.B) { trainbench.Step(b, position.Config{Scheme: "nope"}) })
	b.Run("softcap_stock", func(b *testing.B) { trainbench.Step(b, position.Config{Scheme: "softcap"}) })
}

// TestRefusals: what the decomposed path does not take is refused naming it, not run wrong: a
// distance map when the scheme is built, and drawn position ids and the fused op's attention
// statistics when a graph is.
func TestRefusals(t *testing.T) {
	_, err := position.New(position.Spec{DModel: 4 * heads, Heads: heads, Layers: 2, TrainLen: n,
		Config: position.Config{Scheme: "softcap", DistanceMap: &position.DistanceMapConfig{Type: "rerope"}}})
	if err == nil || !strings.Contains(err.Error(), "distance map") {
		t.Errorf("softcap with a distance map: %v, want an error naming it", err)
	}
	s := scheme(t, nil)
	m, err := model.New(model.Config{Vocab: 256, DModel: 4 * heads, Layers: 2, Heads: heads, TrainLen: n}, s, tensor.Float64, 9)
	if err != nil {
		t.Fatal(err)
	}
	for want, o := range map[string]model.Options{
		"drawn position ids":   {Train: true, PositionRange: 4 * n},
		"attention statistics": {AttentionStats: true},
	} {
		if _, err := m.Graph(s, batch, n, o); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("a graph with %s: %v, want an error naming them", want, err)
		}
	}
}
