// Package stepcheck runs one training graph of a small float64 model with a given position
// scheme and gives its loss and every weight's gradient: what the tests of a stage from outside
// the project compare across paths (a stage on the stock ops against the fused op, a gradient
// against finite differences of the loss), in one place for every such example; and it runs a
// small config through the whole protocol (Protocol), for the tests that need a trained run.
package stepcheck

import (
	"context"
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"gorgonia.org/tensor"

	"extrapolate/data"
	"extrapolate/experiments/config"
	"extrapolate/experiments/measure"
	"extrapolate/experiments/training"
	"extrapolate/internal/cmdtest"
	"extrapolate/model"
	"extrapolate/position"
)

// The model's shape: 2 layers of Heads heads, width 4·Heads, Batch sequences of N tokens.
const Heads, N, Batch = 2, 6, 3

// Scheme builds the scheme pc names for the model's shape, failing t if it cannot.
func Scheme(t testing.TB, pc position.Config) position.Scheme {
	t.Helper()
	s, err := position.New(position.Spec{DModel: 4 * Heads, Heads: Heads, Layers: 2, TrainLen: N, Config: pc})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Result is one training graph's loss and each weight's gradient, by the weight's name.
type Result struct {
	Loss  float64
	Grads map[string][]float64
}

// Run builds the model of seed 9 with s in float64, lets edit change it (nil for nothing), and
// runs one training graph on a fixed random batch.
func Run(t testing.TB, s position.Scheme, edit func(*model.Model)) Result {
	t.Helper()
	m, err := model.New(model.Config{Vocab: 256, DModel: 4 * Heads, Layers: 2, Heads: Heads, TrainLen: N}, s, tensor.Float64, 9)
	if err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		edit(m)
	}
	g, err := m.Graph(s, Batch, N, model.Options{Train: true})
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
	out := Result{Loss: loss, Grads: map[string][]float64{}}
	for i, p := range m.Params {
		out.Grads[p.Name] = append([]float64(nil), g.Grad(i).Data().([]float64)...)
	}
	return out
}

// Nudge returns an edit for Run that adds h to value i of the weight named name.
func Nudge(name string, i int, h float64) func(*model.Model) {
	return func(m *model.Model) {
		for _, p := range m.Params {
			if p.Name == name {
				p.Value.Data().([]float64)[i] += h
			}
		}
	}
}

// FiniteDifference is the central difference (L(w_i + h) − L(w_i − h))/2h of the loss with
// respect to value i of the weight named name.
func FiniteDifference(t testing.TB, s position.Scheme, name string, i int, h float64) float64 {
	up := Run(t, s, Nudge(name, i, h))
	down := Run(t, s, Nudge(name, i, -h))
	return (up.Loss - down.Loss) / (2 * h)
}

// Same fails t unless got has want's loss to 10⁻⁹ relative and each weight's gradient within
// 10⁻⁹ of its norm (of 10⁻⁶ for a gradient of 0 but for rounding): two paths of one model, in
// float64. path names got's, for the errors.
func Same(t testing.TB, got, want Result, path string) {
	t.Helper()
	if rel := math.Abs(got.Loss-want.Loss) / want.Loss; !(rel <= 1e-9) {
		t.Errorf("loss %v %s, %v fused (relative %.2g)", got.Loss, path, want.Loss, rel)
	}
	for name, g := range want.Grads {
		if d := Dist(got.Grads[name], g); !(d <= 1e-9*math.Max(Norm(g), 1e-6)) {
			t.Errorf("%s's gradient differs by %.2g %s, its norm %.2g", name, d, path, Norm(g))
		}
	}
}

// Dist is |a − b|.
func Dist(a, b []float64) float64 {
	var s float64
	for j := range a {
		s += (a[j] - b[j]) * (a[j] - b[j])
	}
	return math.Sqrt(s)
}

// Norm is |a|.
func Norm(a []float64) float64 { return Dist(a, make([]float64, len(a))) }

// Train runs the scheme pc gives through the whole protocol as a user's config would: a tiny
// model (width 16, 2 layers, 2 heads) trains for 30 steps at 16 tokens on a small text corpus,
// saves its checkpoint, and is scored at 1x to 4x. It fails t unless every length has a finite
// loss, and returns the checkpoint's scheme weights, in the order the scheme declares them.
func Train(t testing.TB, pc position.Config) [][]float64 {
	t.Helper()
	c := config.Default()
	c.Name = pc.Scheme
	c.Data = data.Config{Corpus: "text", Path: cmdtest.TextCorpus(t)}
	c.Model.DModel, c.Model.Layers, c.Model.Heads = 16, 2, 2
	c.Position = pc
	warmup := 5
	c.Train.SeqLen, c.Train.BatchSize, c.Train.Steps, c.Train.Warmup, c.Train.LR, c.Train.LogEvery = 16, 4, 30, &warmup, 0.01, 5
	c.Eval = config.Eval{Lengths: []int{16, 32, 64}, Tokens: 512, BatchTokens: 256}
	res, ckpt := Protocol(t, c)
	for _, l := range res.Lengths {
		if !l.Applicable || l.Loss == nil || !(*l.Loss > 0) || math.IsInf(*l.Loss, 0) {
			t.Errorf("length %d: %+v, want a finite loss", l.Length, l)
		}
	}
	trained, err := training.LoadCheckpoint(ckpt)
	if err != nil {
		t.Fatal(err)
	}
	return trained.Model.SchemeWeights(0)
}

// Protocol completes c and runs it through the whole protocol in a folder of t's: it trains,
// saves its checkpoint and is evaluated. It returns the run's result and its checkpoint's path.
func Protocol(t testing.TB, c config.Config) (*measure.Result, string) {
	t.Helper()
	if err := c.Complete(); err != nil {
		t.Fatal(err)
	}
	rc, err := c.Resolve()
	if err != nil {
		t.Fatal(err)
	}
	r := &training.Run{Resolved: rc, Dir: filepath.Join(t.TempDir(), "run")}
	res, err := r.Execute(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return res, filepath.Join(r.Dir, measure.CheckpointFile)
}
