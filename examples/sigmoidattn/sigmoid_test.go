package sigmoidattn_test

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	_ "extrapolate/examples/sigmoidattn"
	"extrapolate/internal/stepcheck"
	"extrapolate/internal/trainbench"
	"extrapolate/model"
	"extrapolate/position"
)

const heads, n, batch = stepcheck.Heads, stepcheck.N, stepcheck.Batch

func scheme(t *testing.T, params map[string]any) position.Scheme {
	return stepcheck.Scheme(t, position.Config{Scheme: "sigmoid", Params: params})
}

// graphSoftmax is a normaliser of a test's own that is the softmax itself, in gorgonia's
// operations: through the decomposed path it must give what the fused op's softmax does.
type graphSoftmax struct{}

func (graphSoftmax) Name() string               { return "graph_softmax" }
func (graphSoftmax) Weights() []position.Weight { return nil }
func (graphSoftmax) GraphWeights(_ *G.ExprGraph, _ []*G.Node, scores, _ *G.Node, _, _, _ int) (*G.Node, error) {
	return G.SoftMax(scores, 2)
}

func init() {
	position.Register("graph_softmax", func(position.Spec) (position.Scheme, error) { return graphSoftmax{}, nil })
}

// TestWeights checks the normaliser against the paper's formula computed here, σ(s + b) on the
// keys a query sees and 0 on the others, with the default b = −log n, a bias given, and learned
// biases per head, on scores of both signs.
func TestWeights(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	in := make([]float64, batch*heads*n*n)
	seen := make([]float64, len(in))
	for i := range in {
		in[i] = 4 * rng.NormFloat64()
		if row, col := (i/n)%n, i%n; col <= row {
			seen[i] = 1
		} else {
			in[i] = -1e9 // as the mask leaves a key the query does not see
		}
	}
	for _, c := range []struct {
		params map[string]any
		bias   []float64
	}{
		{nil, []float64{-math.Log(n), -math.Log(n)}},
		{map[string]any{"bias": -10.0}, []float64{-10, -10}},
		{map[string]any{"learn": true}, []float64{0.5, -2}},
	} {
		s := scheme(t, c.params)
		g := G.NewGraph()
		dense := func(name string, v []float64) *G.Node {
			return G.NewTensor(g, tensor.Float64, 3, G.WithShape(batch*heads, n, n), G.WithName(name),
				G.WithValue(tensor.New(tensor.WithShape(batch*heads, n, n), tensor.WithBacking(append([]float64(nil), v...)))))
		}
		var w []*G.Node
		if len(position.WeightsOf(s)) > 0 {
			w = []*G.Node{G.NewVector(g, tensor.Float64, G.WithShape(heads), G.WithName("bias"), G.WithValue(tensor.New(tensor.WithBacking(append([]float64(nil), c.bias...)))))}
		}
		out, err := position.WeightsGraph(s, g, w, 0, heads, n)(dense("scores", in), dense("seen", seen))
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
			want := 0.0
			if seen[i] == 1 {
				want = 1 / (1 + math.Exp(-(x + c.bias[(i/(n*n))%heads])))
			}
			if math.Abs(got[i]-want) > 1e-12 {
				t.Fatalf("%v: weight %d: %v, want %v", c.params, i, got[i], want)
			}
		}
	}
}

// TestDecomposedPath: a normaliser that is the softmax gives, through the stock ops, the loss
// and gradients of NoPE on the fused op, to 10⁻⁹ of each gradient's norm (10⁻⁶ for a zero one),
// so the decomposed path hands a normaliser the masked scores as the fused op reads them; the
// sigmoid, run the same way, gives another loss.
func TestDecomposedPath(t *testing.T) {
	want := stepcheck.Run(t, stepcheck.Scheme(t, position.Config{Scheme: "nope"}), nil)
	got := stepcheck.Run(t, stepcheck.Scheme(t, position.Config{Scheme: "graph_softmax"}), nil)
	stepcheck.Same(t, got, want, "through the normaliser")
	if sig := stepcheck.Run(t, scheme(t, nil), nil); math.Abs(sig.Loss-want.Loss) < 1e-6 {
		t.Errorf("sigmoid attention's loss %v is the softmax's %v", sig.Loss, want.Loss)
	}
}

// TestGradients checks gorgonia's gradient through the sigmoid against central finite
// differences of the model's loss, in float64: each learned bias, and some of the first layer's
// query weights, whose gradient passes through every weight of the normaliser.
func TestGradients(t *testing.T) {
	s := scheme(t, map[string]any{"learn": true})
	base := stepcheck.Run(t, s, nil)
	check := func(name string, i int) {
		g, ok := base.Grads[name]
		if !ok {
			t.Fatalf("no gradient for %s", name)
		}
		fd := stepcheck.FiniteDifference(t, s, name, i, 1e-6)
		if math.Abs(g[i]-fd) > 1e-6*math.Max(1e-3, math.Abs(fd)) {
			t.Errorf("%s[%d]: gradient %.10g, finite difference %.10g", name, i, g[i], fd)
		}
		if g[i] == 0 {
			t.Errorf("%s[%d]'s gradient is 0: the check cannot fail", name, i)
		}
	}
	for h := range heads {
		check("sigmoid.bias", h)
	}
	for _, i := range []int{0, 5, 17} {
		check("h0.wq", i)
	}
}

// TestTrains runs the normaliser through the whole protocol (stepcheck.Train), each length's
// layers on the stock ops, with learned biases, which move from −log 16.
func TestTrains(t *testing.T) {
	w := stepcheck.Train(t, position.Config{Scheme: "sigmoid", Params: map[string]any{"learn": true}})
	if len(w) != 1 || len(w[0]) != 2 {
		t.Fatalf("the checkpoint holds scheme weights %v, want a bias per head", w)
	}
	for h, b := range w[0] {
		if float32(b) == float32(-math.Log(16)) {
			t.Errorf("head %d's bias is still −log 16 after 30 steps", h)
		}
	}
}

// TestRefusals: what the decomposed path does not take is refused naming it: a distance map
// when the scheme is built; drawn position ids, the fused op's attention statistics, and a
// normaliser or sinks from the config beside the scheme's own, when a graph is.
func TestRefusals(t *testing.T) {
	_, err := position.New(position.Spec{DModel: 4 * heads, Heads: heads, Layers: 2, TrainLen: n,
		Config: position.Config{Scheme: "sigmoid", DistanceMap: &position.DistanceMapConfig{Type: "rerope"}}})
	if err == nil || !strings.Contains(err.Error(), "distance map") {
		t.Errorf("sigmoid with a distance map: %v, want an error naming it", err)
	}
	if _, err := position.New(position.Spec{DModel: 4 * heads, Heads: heads, Layers: 2, TrainLen: n,
		Config: position.Config{Scheme: "sigmoid", Params: map[string]any{"bias": math.Inf(-1)}}}); err == nil || !strings.Contains(err.Error(), "position.bias") {
		t.Errorf("an infinite bias: %v, want an error naming position.bias", err)
	}
	s := scheme(t, nil)
	base := model.Config{Vocab: 256, DModel: 4 * heads, Layers: 2, Heads: heads, TrainLen: n}
	softpick, sinks := base, base
	softpick.Attention.Normaliser = model.Softpick
	sinks.Attention.Sinks = true
	for _, c := range []struct {
		want string
		cfg  model.Config
		o    model.Options
	}{
		{"drawn position ids", base, model.Options{Train: true, PositionRange: 4 * n}},
		{"attention statistics", base, model.Options{AttentionStats: true}},
		{"attention.normaliser", softpick, model.Options{Train: true}},
		{"attention.sinks", sinks, model.Options{Train: true}},
	} {
		// The config's refusals come when the model is made, the graph's when it is built.
		m, err := model.New(c.cfg, s, tensor.Float64, 9)
		if err == nil {
			_, err = m.Graph(s, batch, n, c.o)
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("a model with %s: %v, want an error naming it", c.want, err)
		}
	}
}

// BenchmarkTrainStep times a training step of the comparison's model (width 64, 2 layers, 4
// heads, 16 sequences of 64 tokens) with sigmoid attention on the stock ops, against NoPE's
// softmax on the fused op: the cost of the decomposed path for a normaliser.
func BenchmarkTrainStep(b *testing.B) {
	b.Run("nope_fused", func(b *testing.B) { trainbench.Step(b, position.Config{Scheme: "nope"}) })
	b.Run("sigmoid_stock", func(b *testing.B) { trainbench.Step(b, position.Config{Scheme: "sigmoid"}) })
}
