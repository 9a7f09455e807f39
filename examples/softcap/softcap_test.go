package softcap_test

import (
	"context"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	_ "extrapolate/examples/softcap"
	"extrapolate/experiments"
	"extrapolate/internal/cmdtest"
	"extrapolate/internal/trainbench"
	"extrapolate/model"
	"extrapolate/model/nn"
	"extrapolate/position"
)

const heads, n, batch = 2, 6, 3

func scheme(t *testing.T, params map[string]any) position.Scheme {
	t.Helper()
	s, err := position.New(position.Spec{DModel: 4 * heads, Heads: heads, Layers: 2, TrainLen: n, Config: position.Config{Scheme: "softcap", Params: params}})
	if err != nil {
		t.Fatal(err)
	}
	return s
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
	nope, err := position.New(position.Spec{DModel: 4 * heads, Heads: heads, Layers: 2, TrainLen: n, Config: position.Config{Scheme: "nope"}})
	if err != nil {
		t.Fatal(err)
	}
	want := step(t, nope)
	got := step(t, scheme(t, map[string]any{"cap": 1e6}))
	if rel := math.Abs(got.loss-want.loss) / want.loss; !(rel <= 1e-9) {
		t.Errorf("loss %v through the stage, %v fused (relative %.2g)", got.loss, want.loss, rel)
	}
	for name, g := range want.grads {
		if d := diff(got.grads[name], g); !(d <= 1e-9*math.Max(norm(g), 1e-6)) {
			t.Errorf("%s's gradient differs by %.2g, its norm %.2g", name, d, norm(g))
		}
	}
	if capped := step(t, scheme(t, map[string]any{"cap": 1e-5})); math.Abs(capped.loss-want.loss) < 1e-9 {
		t.Errorf("a cap of 1e-5 leaves the loss at %v, NoPE's %v", capped.loss, want.loss)
	}
}

// TestCapGradient checks gorgonia's gradient of the loss to each learned cap against central
// finite differences of the model's loss, in float64, at caps of 2·10⁻⁴, about the scores of a
// freshly drawn model, where tanh bends them.
func TestCapGradient(t *testing.T) {
	s := scheme(t, map[string]any{"learn": true, "cap": 2e-4})
	base := step(t, s)
	g, ok := base.grads["softcap.cap"]
	if !ok {
		t.Fatalf("no gradient for softcap.cap among %v", base.grads)
	}
	const h = 1e-7
	for i := range g {
		up := stepWith(t, s, func(m *model.Model) { nudge(m, i, h) })
		down := stepWith(t, s, func(m *model.Model) { nudge(m, i, -h) })
		fd := (up.loss - down.loss) / (2 * h)
		if math.Abs(g[i]-fd) > 1e-7*math.Max(1, math.Abs(fd)) {
			t.Errorf("cap %d: gradient %.10g, finite difference %.10g", i, g[i], fd)
		}
	}
	if g[0] == 0 && g[1] == 0 {
		t.Error("the caps' gradient is 0: the check cannot fail")
	}
}

func nudge(m *model.Model, i int, h float64) {
	for _, p := range m.Params {
		if p.Name == "softcap.cap" {
			p.Value.Data().([]float64)[i] += h
		}
	}
}

type result struct {
	loss  float64
	grads map[string][]float64
}

func step(t *testing.T, s position.Scheme) result { return stepWith(t, s, nil) }

// stepWith builds a 2-layer model of seed 9 with s in float64, edits it, and runs one training
// graph on a fixed random batch: the loss and every weight's gradient by name.
func stepWith(t *testing.T, s position.Scheme, edit func(*model.Model)) result {
	t.Helper()
	m, err := model.New(model.Config{Vocab: 256, DModel: 4 * heads, Layers: 2, Heads: heads, TrainLen: n}, s, tensor.Float64, 9)
	if err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		edit(m)
	}
	g, err := m.Graph(s, batch, n, model.Options{Train: true})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	rng := rand.New(rand.NewPCG(6, 2))
	for i := range g.IDs {
		g.IDs[i], g.Targets[i] = rng.IntN(256), rng.IntN(256)
	}
	loss, err := g.Run()
	if err != nil {
		t.Fatal(err)
	}
	out := result{loss: loss, grads: map[string][]float64{}}
	for i, p := range m.Params {
		out.grads[p.Name] = append([]float64(nil), g.Grad(i).Data().([]float64)...)
	}
	return out
}

// diff is |a − b|.
func diff(a, b []float64) float64 {
	var s float64
	for j := range a {
		s += (a[j] - b[j]) * (a[j] - b[j])
	}
	return math.Sqrt(s)
}

// norm is |a|.
func norm(a []float64) float64 { return diff(a, make([]float64, len(a))) }

// TestTrains runs the stage through the whole protocol as a user's config would: a tiny model
// with learned caps trains, saves its checkpoint, and is scored at 1x to 4x, each length's
// layers on the stock ops; the caps move, and every length has a finite loss.
func TestTrains(t *testing.T) {
	dir := t.TempDir()
	cfg := `name: softcap
data: {corpus: text, path: ` + cmdtest.TextCorpus(t) + `}
model: {d_model: 16, layers: 2, heads: 2}
position: {scheme: softcap, cap: 0.5, learn: true}
train: {seq_len: 16, batch_size: 4, steps: 30, warmup: 5, lr: 0.01}
eval: {lengths: [16, 32, 64], tokens: 512, batch_tokens: 256}
`
	path := filepath.Join(dir, "softcap.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	rc, err := experiments.LoadResolved(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := &experiments.Run{Resolved: rc, Dir: filepath.Join(dir, "run")}
	res, err := r.Execute(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range res.Lengths {
		if !l.Applicable || l.Loss == nil || math.IsNaN(*l.Loss) || math.IsInf(*l.Loss, 0) {
			t.Errorf("length %d: %+v, want a finite loss", l.Length, l)
		}
	}
	tr, err := experiments.LoadCheckpoint(filepath.Join(r.Dir, experiments.CheckpointFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range tr.Model.Params {
		if p.Name == "softcap.cap" {
			for h, c := range nn.Values[float32](p.Value) {
				if c == 0.5 {
					t.Errorf("head %d's cap is still 0.5 after 30 steps", h)
				}
			}
			return
		}
	}
	t.Fatal("the checkpoint has no softcap.cap")
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
