// Package gradcheck runs a function of some tensors as a gorgonia graph with its gradient and
// checks that gradient against central finite differences, or against a second implementation.
package gradcheck

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Input is one input of a graph under test.
type Input struct {
	Name  string
	Value *tensor.Dense
	Diff  bool // check its gradient
}

// Var is an input whose gradient is checked.
func Var(name string, v *tensor.Dense) Input { return Input{Name: name, Value: v, Diff: true} }

// Const is an input the function is not differentiated by.
func Const(name string, v *tensor.Dense) Input { return Input{Name: name, Value: v} }

// Rand returns a float64 tensor of normal numbers times scale.
func Rand(rng *rand.Rand, scale float64, shape ...int) *tensor.Dense {
	n := tensor.Shape(shape).TotalSize()
	x := make([]float64, n)
	for i := range x {
		x[i] = scale * rng.NormFloat64()
	}
	return tensor.New(tensor.WithShape(shape...), tensor.WithBacking(x))
}

func Ints(x ...int) *tensor.Dense {
	return tensor.New(tensor.WithShape(len(x)), tensor.WithBacking(x))
}

// Harness runs a scalar function of some inputs, built once as a gorgonia graph with its
// gradient, any number of times.
type Harness struct {
	g      *G.ExprGraph
	nodes  []*G.Node
	in     []Input
	cost   *G.Node
	grads  G.Nodes
	WRT    []int
	vm     G.VM
	Output *G.Node
}

// New builds f over the inputs. When f's result is not a scalar, the cost is its dot
// product with a fixed random tensor, so that every output element carries gradient.
func New(t *testing.T, in []Input, f Builder) *Harness {
	t.Helper()
	h := &Harness{g: G.NewGraph(), in: in}
	for _, x := range in {
		var n *G.Node
		if x.Value.Dtype() == tensor.Int {
			n = G.NewTensor(h.g, tensor.Int, x.Value.Dims(), G.WithShape(x.Value.Shape()...), G.WithName(x.Name), G.WithValue(x.Value))
		} else {
			n = G.NewTensor(h.g, x.Value.Dtype(), x.Value.Dims(), G.WithShape(x.Value.Shape()...), G.WithName(x.Name), G.WithValue(x.Value))
		}
		h.nodes = append(h.nodes, n)
	}
	out, err := f(h.g, h.nodes)
	if err != nil {
		t.Fatal(err)
	}
	h.Output = out
	h.cost = out
	if !out.IsScalar() {
		rng := rand.New(rand.NewPCG(99, 1))
		r := Rand(rng, 1, out.Shape()...)
		if out.Dtype() == tensor.Float32 {
			r = ToF32(r)
		}
		rn := G.NewTensor(h.g, out.Dtype(), out.Dims(), G.WithShape(out.Shape()...), G.WithName("probe"), G.WithValue(r))
		if h.cost, err = G.Sum(G.Must(G.HadamardProd(out, rn))); err != nil {
			t.Fatal(err)
		}
	}
	var wrt G.Nodes
	for i, x := range in {
		if x.Diff {
			wrt = append(wrt, h.nodes[i])
			h.WRT = append(h.WRT, i)
		}
	}
	if len(wrt) > 0 {
		if h.grads, err = G.Grad(h.cost, wrt...); err != nil {
			t.Fatal(err)
		}
	}
	h.vm = G.NewTapeMachine(h.g)
	return h
}

func (h *Harness) Run(t *testing.T) float64 {
	t.Helper()
	h.vm.Reset()
	if err := h.vm.RunAll(); err != nil {
		t.Fatal(err)
	}
	return Scalar(h.cost.Value())
}

// RunErr runs the graph once and returns its error, for a test of what must fail.
func (h *Harness) RunErr() error {
	h.vm.Reset()
	return h.vm.RunAll()
}

func Scalar(v G.Value) float64 {
	switch x := v.(type) {
	case *G.F64:
		return float64(*x)
	case *G.F32:
		return float64(*x)
	case *tensor.Dense:
		switch d := x.Data().(type) {
		case float64:
			return d
		case float32:
			return float64(d)
		case []float64:
			return d[0]
		case []float32:
			return float64(d[0])
		}
	}
	panic(fmt.Sprintf("not a scalar: %T", v))
}

func ToF32(x *tensor.Dense) *tensor.Dense {
	src := x.Data().([]float64)
	y := make([]float32, len(src))
	for i, v := range src {
		y[i] = float32(v)
	}
	return tensor.New(tensor.WithShape(x.Shape()...), tensor.WithBacking(y))
}

// Analytic returns copies of the gradients from the last run.
func (h *Harness) Analytic() [][]float64 {
	var out [][]float64
	for _, g := range h.grads {
		out = append(out, append([]float64(nil), g.Value().Data().([]float64)...))
	}
	return out
}

// Check compares the gradient gorgonia computes through f with central finite
// differences, element by element, in float64.
func Check(t *testing.T, in []Input, f Builder) {
	t.Helper()
	h := New(t, in, f)
	h.Run(t)
	got := h.Analytic()
	const step, tol = 1e-6, 1e-6
	for gi, i := range h.WRT {
		x := in[i].Value.Data().([]float64)
		worst := 0.0
		for e := range x {
			orig := x[e]
			x[e] = orig + step
			up := h.Run(t)
			x[e] = orig - step
			down := h.Run(t)
			x[e] = orig
			want := (up - down) / (2 * step)
			err := math.Abs(got[gi][e]-want) / math.Max(1, math.Abs(want))
			worst = math.Max(worst, err)
			if err > tol {
				t.Errorf("%s[%d]: gradient %.10g, finite difference %.10g", in[i].Name, e, got[gi][e], want)
				return
			}
		}
		t.Logf("%s: %d elements, worst relative error %.2g", in[i].Name, len(x), worst)
	}
	// A second run must give the same gradients: nothing may accumulate across runs.
	h.Run(t)
	again := h.Analytic()
	for gi := range got {
		for e := range got[gi] {
			if got[gi][e] != again[gi][e] {
				t.Fatalf("gradient of %s changed between identical runs: %g then %g", in[h.WRT[gi]].Name, got[gi][e], again[gi][e])
			}
		}
	}
}

// Builder builds the function under test on the graph's input nodes.
type Builder func(g *G.ExprGraph, x []*G.Node) (*G.Node, error)

// Same runs two implementations of one function on the same inputs and requires the same
// output and the same gradients to 1e-9, then checks the reference's gradients by finite
// differences, so that the reference itself is known right.
func Same(t *testing.T, in []Input, f, ref Builder) {
	t.Helper()
	hf := New(t, in, f)
	hr := New(t, in, ref)
	cf, cr := hf.Run(t), hr.Run(t)
	if !close(cf, cr) {
		t.Fatalf("cost %.12g, reference %.12g", cf, cr)
	}
	of, or := values(hf.Output.Value()), values(hr.Output.Value())
	for i := range of {
		if !close(of[i], or[i]) {
			t.Fatalf("output[%d]: %.12g, reference %.12g", i, of[i], or[i])
		}
	}
	gf, gr := hf.Analytic(), hr.Analytic()
	for gi := range gf {
		for e := range gf[gi] {
			if !close(gf[gi][e], gr[gi][e]) {
				t.Fatalf("gradient of %s[%d]: %.12g, reference %.12g", in[hf.WRT[gi]].Name, e, gf[gi][e], gr[gi][e])
			}
		}
	}
	Check(t, in, ref)
}

func close(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func values(v G.Value) []float64 {
	if d, ok := v.(*tensor.Dense); ok {
		if x, ok := d.Data().([]float64); ok {
			return x
		}
	}
	return []float64{Scalar(v)}
}
