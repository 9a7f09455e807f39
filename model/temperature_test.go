package model_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gorgonia.org/tensor"

	"extrapolate/model"
	"extrapolate/model/nn"
	"extrapolate/position"
)

// Two temperatures registered from outside package position, as a user's would be: one fixed,
// one learned. Nothing in package model names them.
func init() {
	position.RegisterTemperature("test_double", func(s position.TemperatureSpec) (position.Temperature, error) {
		return double{s.Heads}, nil
	})
	position.RegisterTemperature("test_learned_log", func(s position.TemperatureSpec) (position.Temperature, error) {
		return learnedLog{s.Heads}, nil
	})
}

// double multiplies every score by 2.
type double struct{ heads int }

func (double) Name() string { return "test_double" }
func (d double) QueryScale(n int) ([]float64, error) {
	v := make([]float64, d.heads*n)
	for i := range v {
		v[i] = 2
	}
	return v, nil
}

// learnedLog is Scalable-Softmax with s starting at 1: at its initial weights, logn_train.
type learnedLog struct{ heads int }

func (learnedLog) Name() string { return "test_learned_log" }
func (l learnedLog) LayerWeights() []position.Weight {
	init := make([]float64, l.heads)
	for h := range init {
		init[h] = 1
	}
	return []position.Weight{{Name: "log_s", Dims: []int{l.heads}, Init: init}}
}
func (l learnedLog) LearnedQueryScale(w [][]float64, n int) ([]float64, error) {
	v := make([]float64, l.heads*n)
	for h, s := range w[0] {
		for i := 0; i < n; i++ {
			v[h*n+i] = s * math.Log(float64(i+1))
		}
	}
	return v, nil
}
func (l learnedLog) LearnedQueryScaleGrad(_ [][]float64, n int, dScale []float64, dw [][]float64) {
	for h := range dw[0] {
		for i := 0; i < n; i++ {
			dw[0][h] += dScale[h*n+i] * math.Log(float64(i+1))
		}
	}
}

var small = model.Config{DModel: 8, Layers: 2, Heads: 2, Vocab: 11, TrainLen: 5}

// loss builds a model of c with the nope scheme from seed 5, lets edit change its weights, and
// returns the loss of a fixed batch of n tokens and the model.
func loss(t *testing.T, c model.Config, n int, train bool, edit func(*model.Model)) (float64, *model.Graph, *model.Model) {
	t.Helper()
	s, err := position.New(position.Spec{DModel: c.DModel, Heads: c.Heads, Layers: c.Layers, TrainLen: c.TrainLen, Config: position.Config{Scheme: "nope"}})
	if err != nil {
		t.Fatal(err)
	}
	m, err := model.New(c, s, tensor.Float64, 5)
	if err != nil {
		t.Fatal(err)
	}
	// Weights larger than their initial 0.02, so that the scores' scale matters.
	r := rand.New(rand.NewPCG(2, 2))
	for _, p := range m.Params {
		if strings.HasSuffix(p.Name, "log_s") {
			continue
		}
		for i, v := range nn.Values[float64](p.Value) {
			nn.Values[float64](p.Value)[i] = v + 0.5*r.NormFloat64()
		}
	}
	if edit != nil {
		edit(m)
	}
	g, err := m.Graph(s, 1, n, model.Options{Train: train})
	if err != nil {
		t.Fatal(err)
	}
	r = rand.New(rand.NewPCG(1, 1))
	for i := range g.IDs {
		g.IDs[i], g.Targets[i] = r.IntN(c.Vocab), r.IntN(c.Vocab)
	}
	l, err := g.Run()
	if err != nil {
		t.Fatal(err)
	}
	return l, g, m
}

func with(scale string) model.Config {
	c := small
	c.Attention = model.Attention{Scale: scale}
	return c
}

// A fixed temperature registered from another package acts: doubling every score is doubling
// every query.
func TestRegisteredFixedTemperature(t *testing.T) {
	const n = 12
	doubled, _, _ := loss(t, with("test_double"), n, false, nil)
	queries, _, _ := loss(t, small, n, false, func(m *model.Model) {
		for l := 0; l < small.Layers; l++ {
			for _, name := range []string{"wq", "bq"} {
				for i, v := range nn.Values[float64](m.Param(fmt.Sprintf("h%d.%s", l, name)).Value) {
					nn.Values[float64](m.Param(fmt.Sprintf("h%d.%s", l, name)).Value)[i] = 2 * v
				}
			}
		}
	})
	if math.Abs(doubled-queries) > 1e-12 {
		t.Errorf("scores doubled by the temperature: loss %v; queries doubled: %v", doubled, queries)
	}
	if plain, _, _ := loss(t, small, n, false, nil); math.Abs(doubled-plain) < 1e-6 {
		t.Errorf("the temperature left the loss at %v", plain)
	}
}

// A learned temperature registered from another package gets its weights in every layer, after
// the layer's attention weights, computes what logn_train does at its initial weights, and its
// gradient reaches its weights.
func TestRegisteredLearnedTemperature(t *testing.T) {
	const n = 12
	learned, g, m := loss(t, with("test_learned_log"), n, true, nil)
	fixed, _, _ := loss(t, with("logn_train"), n, false, nil)
	if math.Abs(learned-fixed) > 1e-12 {
		t.Errorf("loss %v, logn_train's %v; want the same at s = 1", learned, fixed)
	}
	var names []string
	for i, p := range m.Params {
		names = append(names, p.Name)
		if strings.HasSuffix(p.Name, "log_s") {
			if p.Decay {
				t.Errorf("%s decayed", p.Name)
			}
			if gr := nn.Values[float64](g.Grad(i)); gr[0] == 0 && gr[1] == 0 {
				t.Errorf("%s: no gradient", p.Name)
			}
		}
	}
	if got := strings.Join(names, " "); !strings.Contains(got, "h0.bo h0.log_s h0.ln2_g") || !strings.Contains(got, "h1.bo h1.log_s h1.ln2_g") {
		t.Errorf("weights %s; want hL.log_s after hL.bo in each layer", got)
	}
}

// An unknown temperature is an error on one line naming the config field and the known ones.
func TestUnknownTemperature(t *testing.T) {
	err := with("cold").Check()
	if err == nil || strings.Contains(err.Error(), "\n") || !strings.HasPrefix(err.Error(), `attention.scale: unknown scale "cold" (known: `) ||
		!strings.Contains(err.Error(), "logn, logn_train, ssmax, test_double, test_learned_log)") {
		t.Errorf("unknown temperature: %v", err)
	}
	if _, err := model.New(with("cold"), nil, tensor.Float64, 1); err == nil || !strings.HasPrefix(err.Error(), "attention.scale: ") {
		t.Errorf("model.New with an unknown temperature: %v", err)
	}
}
