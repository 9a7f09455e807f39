// Package nn provides the fused gorgonia ops the transformer is built from: each op has a
// hand-written forward and backward pass, owns its output and gradient buffers, and so runs
// without allocating after the first step. Every op is checked against finite differences and
// against the same computation written with gorgonia's stock ops (package stock).
package nn

import (
	"fmt"
	"hash"
	"hash/fnv"
	"sync/atomic"
	"unsafe"

	"github.com/chewxy/hm"
	"github.com/pkg/errors"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// float is the element type of a kernel: float32 for training, float64 for gradient checks.
type float interface{ ~float32 | ~float64 }

// Values returns the elements of t, a float32 or float64 tensor as F says, without copying or
// allocating (tensor.Dense.Data allocates): a view that writes go through.
func Values[F ~float32 | ~float64](t *tensor.Dense) []F {
	raw := t.Raw
	if len(raw) == 0 {
		return nil
	}
	return unsafe.Slice((*F)(unsafe.Pointer(unsafe.SliceData(raw))), len(raw)/int(unsafe.Sizeof(F(0))))
}

// ints returns the elements of an Int tensor without copying.
func ints(t *tensor.Dense) []int {
	raw := t.Raw
	if len(raw) == 0 {
		return nil
	}
	return unsafe.Slice((*int)(unsafe.Pointer(unsafe.SliceData(raw))), len(raw)/int(unsafe.Sizeof(int(0))))
}

// kernel is a computation with a hand-written forward and backward pass. op runs it inside a
// gorgonia graph. A kernel may keep what its backward pass needs from the forward pass (the
// attention probabilities, the LayerNorm statistics), since each kernel belongs to one node.
type kernel interface {
	fmt.Stringer
	// signature gives the types of the inputs and of the output.
	signature() (in []hm.Type, out hm.Type)
	// shape checks the input shapes and returns the output's.
	shape(in []tensor.Shape) (tensor.Shape, error)
	// diffWRT says which inputs the output is differentiable with respect to.
	diffWRT() []bool
	// forward computes out from in. out is allocated once with the shape that shape returned.
	forward(out *tensor.Dense, in []*tensor.Dense) error
	// backward writes (not adds) the gradient of each differentiable input into din[i]; din[i]
	// is nil for the others. dout is the gradient of the output: a tensor of out's shape, or for
	// a scalar output a one-element tensor.
	backward(din []*tensor.Dense, dout, out *tensor.Dense, in []*tensor.Dense) error
}

// gradientPasser is a kernel whose inputs' gradients all equal its output's (addition).
type gradientPasser interface{ passesGradient() }

// differentiable is a kernel that keeps more of its forward pass when a backward pass will
// follow; SymDiff tells it so while the graph is built, before anything runs.
type differentiable interface{ willDifferentiate() }

var opSerial atomic.Uint64

// anyFloat stands for the graph's float dtype in op signatures.
var anyFloat = hm.TypeVariable('a')

func floats(dims int) hm.Type {
	if dims == 0 {
		return anyFloat
	}
	return G.TensorType{Dims: dims, Of: anyFloat}
}

func intTensor(dims int) hm.Type { return G.TensorType{Dims: dims, Of: tensor.Int} }

// apply adds a node running k on the given inputs.
func apply(k kernel, inputs ...*G.Node) (*G.Node, error) {
	n, err := G.ApplyOp(&op{k: k, id: opSerial.Add(1)}, inputs...)
	if err != nil {
		return nil, errors.Wrap(err, k.String())
	}
	return n, nil
}

// op is the gorgonia op that runs a kernel's forward pass. Its output buffer is its own: gorgonia
// gives every node whose op does not return a pointer a register of its own, so the buffer is
// not written by any other node until this node's value is no longer needed.
type op struct {
	k   kernel
	id  uint64 // makes the hash unique: gorgonia merges nodes whose op hashes and inputs agree
	out *tensor.Dense
	in  []*tensor.Dense
	typ hm.Type // gorgonia asks for the type at every run: build it once
}

func (o *op) Arity() int { in, _ := o.k.signature(); return len(in) }
func (o *op) Type() hm.Type {
	if o.typ == nil {
		in, out := o.k.signature()
		o.typ = hm.NewFnType(append(in, out)...)
	}
	return o.typ
}
func (o *op) InferShape(in ...G.DimSizer) (tensor.Shape, error) {
	shapes, err := G.DimSizersToShapes(in)
	if err != nil {
		return nil, err
	}
	return o.k.shape(shapes)
}
func (o *op) ReturnsPtr() bool      { return false }
func (o *op) CallsExtern() bool     { return false }
func (o *op) OverwritesInput() int  { return -1 }
func (o *op) WriteHash(h hash.Hash) { fmt.Fprintf(h, "%s#%d", o.k, o.id) }
func (o *op) Hashcode() uint32      { return hashOf(o) }
func (o *op) String() string        { return o.k.String() }

func (o *op) Do(inputs ...G.Value) (G.Value, error) {
	in, err := denseInputs(&o.in, inputs)
	if err != nil {
		return nil, errors.Wrap(err, o.k.String())
	}
	if o.out == nil {
		shapes := make([]tensor.Shape, len(in))
		for i, t := range in {
			shapes[i] = t.Shape()
		}
		s, err := o.k.shape(shapes)
		if err != nil {
			return nil, err
		}
		o.out = newDense(floatDtype(in), s)
	}
	start := opStart()
	if err := o.k.forward(o.out, in); err != nil {
		return nil, errors.Wrap(err, o.k.String())
	}
	opDone(o.k.String(), start)
	return o.out, nil
}

func (o *op) DiffWRT(n int) []bool { return o.k.diffWRT() }

// SymDiff adds one node that runs the kernel's backward pass, computing every input gradient at
// once, and one node per differentiable input that hands out that input's gradient: gorgonia
// nodes have a single output, and computing each gradient separately would repeat the work.
func (o *op) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	diff := o.k.diffWRT()
	if d, ok := o.k.(differentiable); ok {
		d.willDifferentiate()
	}
	if _, ok := o.k.(gradientPasser); ok {
		grads := make(G.Nodes, len(inputs))
		for i := range grads {
			if diff[i] {
				grads[i] = grad
			}
		}
		return grads, nil
	}
	b := &backwardOp{fwd: o, din: make([]*tensor.Dense, len(inputs)), id: opSerial.Add(1)}
	args := append(append(G.Nodes{}, inputs...), output, grad)
	bn, err := G.ApplyOp(b, args...)
	if err != nil {
		return nil, errors.Wrapf(err, "backward of %s", o.k)
	}
	grads := make(G.Nodes, len(inputs))
	for i, in := range inputs {
		if !diff[i] {
			continue
		}
		p := &gradOp{b: b, i: i, shape: in.Shape().Clone(), dims: in.Dims()}
		if grads[i], err = G.ApplyOp(p, bn); err != nil {
			return nil, errors.Wrapf(err, "gradient %d of %s", i, o.k)
		}
	}
	return grads, nil
}

// backwardOp runs a kernel's backward pass. Its inputs are the forward inputs, the forward
// output and the output's gradient; its own output is a one-element placeholder, and the
// gradients are handed out by gradOp nodes.
type backwardOp struct {
	fwd    *op
	din    []*tensor.Dense
	in     []*tensor.Dense
	mark   *tensor.Dense
	scalar *tensor.Dense // holds a scalar gradient, so that it is not allocated each step
	id     uint64
}

func (b *backwardOp) Arity() int { return len(b.din) + 2 }
func (b *backwardOp) Type() hm.Type {
	in, out := b.fwd.k.signature()
	ts := append(append([]hm.Type{}, in...), out, out, floats(1))
	return hm.NewFnType(ts...)
}
func (b *backwardOp) InferShape(...G.DimSizer) (tensor.Shape, error) { return tensor.Shape{1}, nil }
func (b *backwardOp) ReturnsPtr() bool                               { return false }
func (b *backwardOp) CallsExtern() bool                              { return false }
func (b *backwardOp) OverwritesInput() int                           { return -1 }
func (b *backwardOp) WriteHash(h hash.Hash)                          { fmt.Fprintf(h, "d%s#%d", b.fwd.k, b.id) }
func (b *backwardOp) Hashcode() uint32                               { return hashOf(b) }
func (b *backwardOp) String() string                                 { return "∂" + b.fwd.k.String() }

func (b *backwardOp) Do(inputs ...G.Value) (G.Value, error) {
	n := len(b.din)
	if len(inputs) != n+2 {
		return nil, errors.Errorf("%s: %d inputs, want %d", b, len(inputs), n+2)
	}
	in, err := denseInputs(&b.in, inputs[:n])
	if err != nil {
		return nil, errors.Wrap(err, b.String())
	}
	out, ok := inputs[n].(*tensor.Dense)
	if !ok {
		return nil, errors.Errorf("%s: output is %T", b, inputs[n])
	}
	dout, err := gradValue(inputs[n+1], &b.scalar)
	if err != nil {
		return nil, errors.Wrap(err, b.String())
	}
	dt := out.Dtype()
	for i, d := range b.fwd.k.diffWRT() {
		if d && b.din[i] == nil {
			b.din[i] = newDense(dt, in[i].Shape())
		}
	}
	if b.mark == nil {
		b.mark = newDense(dt, tensor.Shape{1})
	}
	start := opStart()
	if err := b.fwd.k.backward(b.din, dout, out, in); err != nil {
		return nil, errors.Wrap(err, b.String())
	}
	opDone(b.String(), start)
	return b.mark, nil
}

// gradOp hands out one input gradient that a backwardOp computed.
type gradOp struct {
	b     *backwardOp
	i     int
	shape tensor.Shape
	dims  int
}

func (p *gradOp) Arity() int                                     { return 1 }
func (p *gradOp) Type() hm.Type                                  { return hm.NewFnType(floats(1), floats(p.dims)) }
func (p *gradOp) InferShape(...G.DimSizer) (tensor.Shape, error) { return p.shape.Clone(), nil }
func (p *gradOp) ReturnsPtr() bool                               { return false }
func (p *gradOp) CallsExtern() bool                              { return false }
func (p *gradOp) OverwritesInput() int                           { return -1 }
func (p *gradOp) WriteHash(h hash.Hash)                          { fmt.Fprintf(h, "grad%d#%d", p.i, p.b.id) }
func (p *gradOp) Hashcode() uint32                               { return hashOf(p) }
func (p *gradOp) String() string                                 { return fmt.Sprintf("∂%s/∂in%d", p.b.fwd.k, p.i) }
func (p *gradOp) Do(...G.Value) (G.Value, error) {
	if d := p.b.din[p.i]; d != nil {
		return d, nil
	}
	return nil, errors.Errorf("%s: backward pass has not run", p)
}

// denseInputs converts the values an op receives, reusing buf.
func denseInputs(buf *[]*tensor.Dense, inputs []G.Value) ([]*tensor.Dense, error) {
	if cap(*buf) < len(inputs) {
		*buf = make([]*tensor.Dense, len(inputs))
	}
	in := (*buf)[:len(inputs)]
	for i, v := range inputs {
		d, ok := v.(*tensor.Dense)
		if !ok {
			return nil, errors.Errorf("input %d is %T, want *tensor.Dense", i, v)
		}
		in[i] = d
	}
	return in, nil
}

// gradValue returns the gradient flowing into a node as a tensor: gorgonia passes the gradient
// of the cost with respect to itself as a scalar constant.
func gradValue(v G.Value, scalar **tensor.Dense) (*tensor.Dense, error) {
	switch g := v.(type) {
	case *tensor.Dense:
		return g, nil
	case *G.F32:
		if *scalar == nil {
			*scalar = newDense(tensor.Float32, tensor.Shape{1})
		}
		Values[float32](*scalar)[0] = float32(*g)
		return *scalar, nil
	case *G.F64:
		if *scalar == nil {
			*scalar = newDense(tensor.Float64, tensor.Shape{1})
		}
		Values[float64](*scalar)[0] = float64(*g)
		return *scalar, nil
	}
	return nil, errors.Errorf("gradient is %T", v)
}

// floatDtype is the dtype of the first float input.
func floatDtype(in []*tensor.Dense) tensor.Dtype {
	for _, t := range in {
		if dt := t.Dtype(); dt == tensor.Float32 || dt == tensor.Float64 {
			return dt
		}
	}
	return tensor.Float32
}

func newDense(dt tensor.Dtype, s tensor.Shape) *tensor.Dense {
	return tensor.New(tensor.WithShape(s.Clone()...), tensor.Of(dt))
}

type hashWriter interface{ WriteHash(hash.Hash) }

func hashOf(o hashWriter) uint32 {
	h := fnv.New32a()
	o.WriteHash(h)
	return h.Sum32()
}
