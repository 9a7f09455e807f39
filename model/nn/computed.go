package nn

import (
	"github.com/chewxy/hm"
	"github.com/pkg/errors"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Computation is a function with a hand-written gradient, written on float64 slices so that it
// needs nothing of gorgonia: how a position scheme turns its weights into a table or a bias.
type Computation interface {
	// Forward writes the output from the inputs.
	Forward(in [][]float64, out []float64) error
	// Backward adds to din[i] the gradient of the loss with respect to input i, given dout,
	// its gradient with respect to the output. din starts at zero.
	Backward(in [][]float64, dout []float64, din [][]float64)
}

// Compute adds a node of the given shape computed by c from the inputs, differentiable with
// respect to every input through c's Backward. Values cross to and from float64 at each run,
// which suits small computations such as a scheme's few hundred weights.
func Compute(name string, c Computation, shape tensor.Shape, inputs ...*G.Node) (*G.Node, error) {
	if len(inputs) == 0 {
		return nil, errors.Errorf("%s: no inputs", name)
	}
	dims := make([]int, len(inputs))
	for i, in := range inputs {
		dims[i] = in.Dims()
	}
	f32 := &computed[float32]{name: name, c: c, outShape: shape.Clone(), dims: dims}
	f64 := &computed[float64]{name: name, c: c, outShape: shape.Clone(), dims: dims}
	k, err := byDtype(inputs[0], f32, f64)
	if err != nil {
		return nil, err
	}
	return apply(k, inputs...)
}

type computed[F float] struct {
	name     string
	c        Computation
	outShape tensor.Shape
	dims     []int
	// float64 copies of the inputs, the output and the gradients, kept between runs.
	in, din   [][]float64
	out, dout []float64
	// computed says out holds the output for in: while the inputs do not change, as when
	// evaluating, the output is not computed again.
	computed bool
}

func (k *computed[F]) String() string { return k.name }
func (k *computed[F]) signature() ([]hm.Type, hm.Type) {
	in := make([]hm.Type, len(k.dims))
	for i, d := range k.dims {
		in[i] = floats(d)
	}
	return in, floats(len(k.outShape))
}
func (k *computed[F]) diffWRT() []bool {
	d := make([]bool, len(k.dims))
	for i := range d {
		d[i] = true
	}
	return d
}
func (k *computed[F]) shape(in []tensor.Shape) (tensor.Shape, error) {
	if len(in) != len(k.dims) {
		return nil, errors.Errorf("%s: %d inputs, want %d", k.name, len(in), len(k.dims))
	}
	return k.outShape.Clone(), nil
}

// load copies the inputs into float64 buffers, sized on first use, and says whether they
// changed since the last call.
func (k *computed[F]) load(in []*tensor.Dense) (changed bool) {
	if k.in == nil {
		k.in, k.din = make([][]float64, len(in)), make([][]float64, len(in))
		for i, t := range in {
			n := t.Shape().TotalSize()
			k.in[i], k.din[i] = make([]float64, n), make([]float64, n)
		}
		k.out, k.dout = make([]float64, k.outShape.TotalSize()), make([]float64, k.outShape.TotalSize())
		changed = true
	}
	for i, t := range in {
		for j, v := range Values[F](t) {
			if x := float64(v); k.in[i][j] != x {
				k.in[i][j], changed = x, true
			}
		}
	}
	return changed
}

func (k *computed[F]) forward(out *tensor.Dense, in []*tensor.Dense) error {
	if k.load(in) || !k.computed {
		k.computed = false
		clear(k.out)
		if err := k.c.Forward(k.in, k.out); err != nil {
			return errors.Wrap(err, k.name)
		}
		k.computed = true
	}
	y := Values[F](out)
	for i, v := range k.out {
		y[i] = F(v)
	}
	return nil
}

func (k *computed[F]) backward(din []*tensor.Dense, dout, _ *tensor.Dense, in []*tensor.Dense) error {
	if k.load(in) {
		k.computed = false
	}
	for i, v := range Values[F](dout) {
		k.dout[i] = float64(v)
	}
	for _, d := range k.din {
		clear(d)
	}
	k.c.Backward(k.in, k.dout, k.din)
	for i, d := range din {
		x := Values[F](d)
		for j, v := range k.din[i] {
			x[j] = F(v)
		}
	}
	return nil
}
