// Package model is a small decoder-only transformer language model in gorgonia: token
// embedding, pre-LayerNorm blocks of causal multi-head self-attention and a 4x GELU MLP, a final
// LayerNorm and a linear head, trained with mean cross-entropy. Position information comes from
// a position.Scheme. The weights live in the Model; a Graph unrolls the model for one (batch,
// length) shape, and every Graph of a Model shares the same weight tensors.
package model

import (
	"errors"
	"fmt"
	"math"

	"gorgonia.org/tensor"

	"extrapolate/internal/rng"
	"extrapolate/position"
)

// Config is the model section of a run's config.
type Config struct {
	DModel int `yaml:"d_model"`
	Layers int `yaml:"layers"`
	Heads  int `yaml:"heads"`
	// Vocab is set by the tokenizer, not by the config.
	Vocab int `yaml:"-"`
}

// Check reports the first field that makes no sense, by its config name.
func (c Config) Check() error {
	switch {
	case c.DModel <= 0:
		return fmt.Errorf("model.d_model: %d, want a positive number", c.DModel)
	case c.Layers <= 0:
		return fmt.Errorf("model.layers: %d, want a positive number", c.Layers)
	case c.Heads <= 0:
		return fmt.Errorf("model.heads: %d, want a positive number", c.Heads)
	case c.DModel%c.Heads != 0:
		return fmt.Errorf("model.heads: d_model %d is not divisible by %d heads", c.DModel, c.Heads)
	case c.Vocab <= 0:
		return fmt.Errorf("model: vocabulary of %d tokens", c.Vocab)
	}
	return nil
}

// lnEps is LayerNorm's ε, PyTorch's default.
const lnEps = 1e-5

// initStd is the standard deviation of the initial weight matrices, as in GPT-2.
const initStd = 0.02

// Param is one weight tensor of the model.
type Param struct {
	Name  string
	Value *tensor.Dense
	// Decay says whether weight decay applies: to matrices, not to biases and LayerNorm gains.
	Decay bool
}

// Model holds the weights.
type Model struct {
	Config Config
	Dtype  tensor.Dtype
	// Params lists every weight in a fixed order: the order of the checkpoint and the optimizer.
	Params []*Param
	byName map[string]*Param
	// learnedPositions is set when the scheme's position table is a weight ("wpe").
	learnedPositions bool
}

// New returns a model with fresh weights drawn from seed. The scheme is asked for its table at
// the training length: a learned table becomes the weight wpe.
func New(c Config, scheme position.Scheme, trainLen int, dt tensor.Dtype, seed uint64) (*Model, error) {
	if err := c.Check(); err != nil {
		return nil, err
	}
	if dt != tensor.Float32 && dt != tensor.Float64 {
		return nil, fmt.Errorf("model: dtype %v, want float32 or float64", dt)
	}
	rows, err := LearnedRows(scheme, trainLen)
	if err != nil {
		return nil, err
	}
	m := &Model{Config: c, Dtype: dt, byName: map[string]*Param{}, learnedPositions: rows > 0}
	draws := normals{rng.SplitMix64{State: seed}}
	for _, s := range Shapes(c, rows) {
		var p *Param
		switch s.Init {
		case initNormal:
			p = draws.matrix(s.Name, s.Dims[0], s.Dims[1])
		case initOnes:
			p = filled(s.Name, 1, s.Dims[0])
		default:
			p = filled(s.Name, 0, s.Dims[0])
		}
		p.Value = convertTo(p.Value, dt)
		m.add(p)
	}
	return m, nil
}

// LearnedRows is the number of rows of the scheme's learned position table, 0 if it has none.
func LearnedRows(scheme position.Scheme, trainLen int) (int, error) {
	table, err := scheme.Embedding(trainLen)
	if err != nil {
		return 0, err
	}
	if table != nil && table.Learned {
		return table.Rows, nil
	}
	return 0, nil
}

// Shape is one weight's name, shape and initialisation.
type Shape struct {
	Name string
	Dims []int
	Init string
}

const (
	initNormal = "normal" // N(0, initStd²)
	initOnes   = "ones"
	initZeros  = "zeros"
)

// Shapes lists the model's weights in order, the order of the checkpoint and of the initial
// draws, which follow PyTorch's reference script (shared/bench) so that the two start from the
// same weights. learnedRows > 0 adds a learned position table wpe of that many rows.
func Shapes(c Config, learnedRows int) []Shape {
	d, v := c.DModel, c.Vocab
	matrix := func(name string, r, k int) Shape { return Shape{name, []int{r, k}, initNormal} }
	vector := func(name string, n int, init string) Shape { return Shape{name, []int{n}, init} }
	out := []Shape{matrix("wte", v, d)}
	if learnedRows > 0 {
		out = append(out, matrix("wpe", learnedRows, d))
	}
	for l := 0; l < c.Layers; l++ {
		p := fmt.Sprintf("h%d.", l)
		out = append(out, vector(p+"ln1_g", d, initOnes), vector(p+"ln1_b", d, initZeros))
		for _, w := range []string{"q", "k", "v", "o"} {
			out = append(out, matrix(p+"w"+w, d, d), vector(p+"b"+w, d, initZeros))
		}
		out = append(out, vector(p+"ln2_g", d, initOnes), vector(p+"ln2_b", d, initZeros))
		out = append(out, matrix(p+"w1", d, 4*d), vector(p+"b1", 4*d, initZeros))
		out = append(out, matrix(p+"w2", 4*d, d), vector(p+"b2", d, initZeros))
	}
	out = append(out, vector("lnf_g", d, initOnes), vector("lnf_b", d, initZeros))
	return append(out, matrix("whead", d, v), vector("bhead", v, initZeros))
}

func (m *Model) add(ps ...*Param) {
	for _, p := range ps {
		m.Params = append(m.Params, p)
		m.byName[p.Name] = p
	}
}

// Param returns the weight with the given name, or nil.
func (m *Model) Param(name string) *Param { return m.byName[name] }

// NumParams counts the weights.
func (m *Model) NumParams() int {
	n := 0
	for _, p := range m.Params {
		n += p.Value.Shape().TotalSize()
	}
	return n
}

func filled(name string, v float64, n int) *Param {
	x := make([]float64, n)
	for i := range x {
		x[i] = v
	}
	return &Param{Name: name, Value: tensor.New(tensor.WithShape(n), tensor.WithBacking(x))}
}

// normals draws N(0, initStd²) numbers: SplitMix64 and Box-Muller, exactly as the reference does.
type normals struct{ rng.SplitMix64 }

func (r *normals) matrix(name string, rows, cols int) *Param {
	x := make([]float64, rows*cols)
	for i := range x {
		u1 := (float64(r.Next()>>11) + 1) / (1 << 53)
		u2 := float64(r.Next()>>11) / (1 << 53)
		x[i] = initStd * math.Sqrt(-2*math.Log(u1)) * math.Cos(2*math.Pi*u2)
	}
	return &Param{Name: name, Value: tensor.New(tensor.WithShape(rows, cols), tensor.WithBacking(x)), Decay: true}
}

func convertTo(t *tensor.Dense, dt tensor.Dtype) *tensor.Dense {
	if dt == tensor.Float64 {
		return t
	}
	src := t.Data().([]float64)
	dst := make([]float32, len(src))
	for i, v := range src {
		dst[i] = float32(v)
	}
	return tensor.New(tensor.WithShape(t.Shape()...), tensor.WithBacking(dst))
}

// ErrNotApplicable wraps position.ErrNotApplicable for lengths a scheme cannot handle.
var ErrNotApplicable = position.ErrNotApplicable

// IsNotApplicable reports whether err says the scheme cannot handle a length by design.
func IsNotApplicable(err error) bool { return errors.Is(err, position.ErrNotApplicable) }
