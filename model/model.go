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
	"extrapolate/model/nn"
	"extrapolate/position"
)

// Config is the model section of a run's config.
type Config struct {
	DModel int `yaml:"d_model"`
	Layers int `yaml:"layers"`
	Heads  int `yaml:"heads"`
	// Vocab is set by the tokenizer, not by the config.
	Vocab int `yaml:"-"`
	// Attention is the config's attention section, and TrainLen its training length, which
	// log-n scaling divides by.
	Attention Attention `yaml:"-"`
	TrainLen  int       `yaml:"-"`
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
	if err := c.Attention.checkNormaliser(); err != nil {
		return err
	}
	if err := c.Attention.checkGate(); err != nil {
		return err
	}
	_, err := c.temperature()
	return err
}

// LayerNormEps is LayerNorm's ε, PyTorch's default; an export states it for its loader.
const LayerNormEps = 1e-5

// initStd is the standard deviation of the initial weight matrices, as in GPT-2.
const initStd = 0.02

// Param is one weight tensor of the model.
type Param struct {
	Name  string
	Value *tensor.Dense
	// Decay says whether weight decay applies: to matrices, not to biases and LayerNorm gains.
	Decay bool
	// LRScale multiplies the learning rate for this weight (a position scheme's choice); 0 is 1.
	LRScale float64
	// Floor, when set, is the least value the weight may take after any update.
	Floor *float64
}

// Model holds the weights, as nanoGPT's ModuleDict does: the token embedding, the blocks, the
// final LayerNorm and the head, and the position scheme's own weights.
type Model struct {
	Config Config
	Dtype  tensor.Dtype
	// Params lists every weight in a fixed order: the order of the checkpoint and the optimizer.
	Params []*Param

	wte                      *Param
	h                        []block
	lnfG, lnfB, whead, bhead *Param
	// schemes lists the position scheme's own weights, in the order it declares them: one list
	// for the scheme of the whole model, or one per layer for a position.PerLayer scheme.
	schemes [][]*Param
	// temperature is the attention temperature the config names, nil for none.
	temperature position.Temperature
}

// block is one transformer block's weights: a pre-LayerNorm attention (with the temperature's
// weights, when it learns its factors, such as Scalable-Softmax's scale per head) and a
// pre-LayerNorm 4x GELU MLP.
type block struct {
	ln1G, ln1B, wq, bq, wk, bk, wv, bv, wo, bo *Param
	wg, bg                                     *Param // the attention gate's, nil without one (gate.go)
	sinks                                      *Param // the sink logits, nil without them (sinks.go)
	temperature                                []*Param
	ln2G, ln2B, w1, b1, w2, b2                 *Param
}

// New returns a model with fresh weights drawn from seed, with the weights the position scheme
// declares, if it is a position.Learner.
func New(c Config, scheme position.Scheme, dt tensor.Dtype, seed uint64) (*Model, error) {
	if err := c.Check(); err != nil {
		return nil, err
	}
	if dt != tensor.Float32 && dt != tensor.Float64 {
		return nil, fmt.Errorf("model: dtype %v, want float32 or float64", dt)
	}
	m := &Model{Config: c, Dtype: dt}
	var err error
	if m.temperature, err = c.temperature(); err != nil {
		return nil, err
	}
	if err := c.CheckScheme(scheme); err != nil {
		return nil, err
	}
	weights, err := m.layout(scheme)
	if err != nil {
		return nil, err
	}
	draws := normals{rng.SplitMix64{State: seed}}
	for _, s := range weights {
		p := &Param{Name: s.Name, Decay: s.Decay, LRScale: s.LRScale, Floor: s.Floor}
		switch {
		case s.Std > 0:
			p.Value = draws.tensor(s.Dims, s.Std)
		case s.Uniform > 0:
			p.Value = draws.uniform(s.Dims, s.Uniform)
		case s.Init != nil:
			p.Value = tensor.New(tensor.WithShape(s.Dims...), tensor.WithBacking(append([]float64(nil), s.Init...)))
		default:
			p.Value = tensor.New(tensor.WithShape(s.Dims...), tensor.Of(tensor.Float64))
		}
		p.Value = convertTo(p.Value, dt)
		p.clamp()
		m.Params = append(m.Params, p)
		if s.field != nil {
			*s.field = p
		}
		if s.Owner > 0 {
			for len(m.schemes) < s.Owner {
				m.schemes = append(m.schemes, nil)
			}
			m.schemes[s.Owner-1] = append(m.schemes[s.Owner-1], p)
		}
	}
	return m, nil
}

// Shape is one weight's name, shape and initialisation.
type Shape struct {
	Name string
	Dims []int
	// Std > 0 draws the weight N(0, Std²), Uniform > 0 draws it U(0, Uniform); otherwise it
	// starts at Init, or zero.
	Std, Uniform float64
	Init         []float64
	Decay        bool
	// LRScale and Floor are as in Param.
	LRScale float64
	Floor   *float64
	// Owner is 0 for the model's own weights; 1 for the position scheme's, or 1+l for the
	// scheme of layer l of a position.PerLayer scheme.
	Owner int
}

// Shapes lists the model's weights in order, the order of the checkpoint and of the initial
// draws (see layout). It fails if a scheme's weight is malformed or takes another weight's name.
func Shapes(c Config, scheme position.Scheme) ([]Shape, error) {
	t, err := c.temperature()
	if err != nil {
		return nil, err
	}
	if err := c.CheckScheme(scheme); err != nil {
		return nil, err
	}
	weights, err := (&Model{Config: c, temperature: t}).layout(scheme)
	if err != nil {
		return nil, err
	}
	out := make([]Shape, len(weights))
	for i, w := range weights {
		out[i] = w.Shape
	}
	return out, nil
}

// weight is one weight of the layout, and the field of the model that holds it.
type weight struct {
	Shape
	field **Param
}

// layout states the model's structure once: every weight with its name, shape, initialisation
// and the field that holds it, in the order of the checkpoint and of the initial draws, which
// follow PyTorch's reference script (bench/torch_ref.py) so that the two start from the same
// weights: the token embedding, the scheme's weights (a learned table wpe, T5's bias, ...; a
// per-layer scheme's prefixed hL.), then the blocks, the final LayerNorm and the head.
func (m *Model) layout(scheme position.Scheme) ([]weight, error) {
	c := m.Config
	d, v := c.DModel, c.Vocab
	matrix := func(field **Param, name string, r, k int) weight {
		return weight{Shape{Name: name, Dims: []int{r, k}, Std: initStd, Decay: true}, field}
	}
	vector := func(field **Param, name string, n int, init float64) weight {
		s := Shape{Name: name, Dims: []int{n}}
		if init != 0 {
			s.Init = make([]float64, n)
			for i := range s.Init {
				s.Init[i] = init
			}
		}
		return weight{s, field}
	}
	m.h = make([]block, c.Layers)
	var blocks []weight
	for l := range m.h {
		b, p := &m.h[l], fmt.Sprintf("h%d.", l)
		blocks = append(blocks,
			vector(&b.ln1G, p+"ln1_g", d, 1), vector(&b.ln1B, p+"ln1_b", d, 0),
			matrix(&b.wq, p+"wq", d, d), vector(&b.bq, p+"bq", d, 0),
			matrix(&b.wk, p+"wk", d, d), vector(&b.bk, p+"bk", d, 0),
			matrix(&b.wv, p+"wv", d, d), vector(&b.bv, p+"bv", d, 0),
			matrix(&b.wo, p+"wo", d, d), vector(&b.bo, p+"bo", d, 0))
		if g := c.gateWidth(); g > 0 {
			// Initialised as q's projection, of which the reference's gate is a part.
			blocks = append(blocks, matrix(&b.wg, p+"wg", d, g), vector(&b.bg, p+"bg", g, 0))
		}
		if c.Attention.Sinks {
			// N(0, 0.02²), as Hugging Face's gpt_oss initialises its sinks; no decay, as the
			// model's other vectors.
			blocks = append(blocks, weight{Shape{Name: p + "sinks", Dims: []int{c.Heads}, Std: initStd}, &b.sinks})
		}
		tw, err := m.temperatureWeights(b, p)
		if err != nil {
			return nil, err
		}
		blocks = append(blocks, tw...)
		blocks = append(blocks,
			vector(&b.ln2G, p+"ln2_g", d, 1), vector(&b.ln2B, p+"ln2_b", d, 0),
			matrix(&b.w1, p+"w1", d, 4*d), vector(&b.b1, p+"b1", 4*d, 0),
			matrix(&b.w2, p+"w2", 4*d, d), vector(&b.b2, p+"b2", d, 0))
	}
	blocks = append(blocks,
		vector(&m.lnfG, "lnf_g", d, 1), vector(&m.lnfB, "lnf_b", d, 0),
		matrix(&m.whead, "whead", d, v), vector(&m.bhead, "bhead", v, 0))

	out := []weight{matrix(&m.wte, "wte", v, d)}
	taken := map[string]bool{"wte": true}
	for _, b := range blocks {
		if taken[b.Name] { // only a temperature's weight can: the model's own names are distinct
			return nil, fmt.Errorf("model: the attention temperature's weight %q clashes with another weight", b.Name)
		}
		taken[b.Name] = true
	}
	for i, o := range position.Owners(scheme, c.Layers) {
		for _, w := range position.WeightsOf(o) {
			name := ownerPrefix(scheme, i) + w.Name
			if err := checkWeight("the "+o.Name()+" scheme", name, w, taken); err != nil {
				return nil, err
			}
			taken[name] = true
			out = append(out, weight{Shape: Shape{Name: name, Dims: w.Dims, Std: w.Std, Uniform: w.Uniform, Init: w.Init, Decay: w.Decay,
				LRScale: w.LRScale, Floor: w.Floor, Owner: i + 1}})
		}
	}
	return append(out, blocks...), nil
}

// temperatureWeights lays out the weights the temperature declares for block b, named with the
// block's prefix, and binds them to the block.
func (m *Model) temperatureWeights(b *block, prefix string) ([]weight, error) {
	tw := position.LayerWeightsOf(m.temperature)
	b.temperature = make([]*Param, len(tw))
	out := make([]weight, len(tw))
	for i, w := range tw {
		if err := checkWeight("the "+m.temperature.Name()+" temperature", prefix+w.Name, w, nil); err != nil {
			return nil, err
		}
		out[i] = weight{Shape{Name: prefix + w.Name, Dims: w.Dims, Std: w.Std, Uniform: w.Uniform, Init: w.Init, Decay: w.Decay,
			LRScale: w.LRScale, Floor: w.Floor}, &b.temperature[i]}
	}
	return out, nil
}

// checkWeight refuses a weight declared by owner (a scheme, a temperature) that takes another
// weight's name or cannot be made.
func checkWeight(owner, name string, w position.Weight, taken map[string]bool) error {
	switch {
	case taken[name] || w.Name == "":
		return fmt.Errorf("model: %s's weight %q clashes with another weight", owner, name)
	case len(w.Dims) == 0 || w.Size() <= 0:
		return fmt.Errorf("model: %s's weight %s has shape %v", owner, name, w.Dims)
	case w.Init != nil && len(w.Init) != w.Size():
		return fmt.Errorf("model: %s's weight %s has %d initial values for shape %v", owner, name, len(w.Init), w.Dims)
	case !(w.LRScale >= 0) || math.IsInf(w.LRScale, 0) || !(w.Uniform >= 0) || !(w.Std >= 0):
		return fmt.Errorf("model: %s's weight %s has std %g, uniform %g, lr scale %g", owner, name, w.Std, w.Uniform, w.LRScale)
	}
	return nil
}

// ownerPrefix is the prefix of the names of the weights of position.Owners(s)[i]: none for the
// scheme of the whole model, hL. for layer L's own scheme.
func ownerPrefix(s position.Scheme, i int) string {
	if position.IsPerLayer(s) {
		return fmt.Sprintf("h%d.", i)
	}
	return ""
}

// NumParams counts the weights.
func (m *Model) NumParams() int {
	n := 0
	for _, p := range m.Params {
		n += p.Value.Shape().TotalSize()
	}
	return n
}

// normals draws N(0, std²) numbers: SplitMix64 and Box-Muller, exactly as the reference does.
type normals struct{ rng.SplitMix64 }

// uniform draws U(0, max) numbers from the same generator, 53 bits each, as torch.rand·max.
func (r *normals) uniform(dims []int, max float64) *tensor.Dense {
	n := 1
	for _, d := range dims {
		n *= d
	}
	x := make([]float64, n)
	for i := range x {
		x[i] = max * float64(r.Next()>>11) / (1 << 53)
	}
	return tensor.New(tensor.WithShape(dims...), tensor.WithBacking(x))
}

// clamp raises every value below the parameter's floor to it.
func (p *Param) clamp() {
	if p.Floor == nil {
		return
	}
	switch p.Value.Dtype() {
	case tensor.Float32:
		floorAt(nn.Values[float32](p.Value), float32(*p.Floor))
	default:
		floorAt(nn.Values[float64](p.Value), *p.Floor)
	}
}

func floorAt[F ~float32 | ~float64](w []F, floor F) {
	for i, x := range w {
		if x < floor {
			w[i] = floor
		}
	}
}

func (r *normals) tensor(dims []int, std float64) *tensor.Dense {
	n := 1
	for _, d := range dims {
		n *= d
	}
	x := make([]float64, n)
	for i := range x {
		u1 := (float64(r.Next()>>11) + 1) / (1 << 53)
		u2 := float64(r.Next()>>11) / (1 << 53)
		x[i] = std * math.Sqrt(-2*math.Log(u1)) * math.Cos(2*math.Pi*u2)
	}
	return tensor.New(tensor.WithShape(dims...), tensor.WithBacking(x))
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

// IsNotApplicable reports whether err says the scheme cannot handle a length by design.
func IsNotApplicable(err error) bool { return errors.Is(err, position.ErrNotApplicable) }

// SchemeWeights returns the values of the position scheme's weights, in the order the scheme
// declares them, as float64: those of the scheme of layer l of a position.PerLayer scheme, or
// with l = 0, of the scheme of the whole model.
func (m *Model) SchemeWeights(l int) [][]float64 {
	if l >= len(m.schemes) {
		return nil
	}
	v := make([][]float64, len(m.schemes[l]))
	for i, p := range m.schemes[l] {
		v[i] = float64s(p.Value)
	}
	return v
}
