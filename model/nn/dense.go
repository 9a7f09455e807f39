package nn

import (
	"unsafe"

	"github.com/chewxy/hm"
	"github.com/pkg/errors"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// byDtype picks the float32 or float64 instance of a kernel for x's dtype.
func byDtype(x *G.Node, k32, k64 kernel) (kernel, error) {
	switch x.Dtype() {
	case tensor.Float32:
		return k32, nil
	case tensor.Float64:
		return k64, nil
	}
	return nil, errors.Errorf("nn: dtype %v is not supported, only float32 and float64", x.Dtype())
}

// Linear returns x·w + b for x of shape (n, in), w (in, out) and b (out).
func Linear(x, w, b *G.Node) (*G.Node, error) {
	k, err := byDtype(x, linear[float32]{}, linear[float64]{})
	if err != nil {
		return nil, err
	}
	return apply(k, x, w, b)
}

type linear[F float] struct{}

func (linear[F]) String() string { return "Linear" }
func (linear[F]) signature() ([]hm.Type, hm.Type) {
	return []hm.Type{floats(2), floats(2), floats(1)}, floats(2)
}
func (linear[F]) diffWRT() []bool { return []bool{true, true, true} }

func (linear[F]) shape(in []tensor.Shape) (tensor.Shape, error) {
	x, w, b := in[0], in[1], in[2]
	if len(x) != 2 || len(w) != 2 || len(b) != 1 || x[1] != w[0] || w[1] != b[0] {
		return nil, errors.Errorf("Linear: shapes x %v, w %v, b %v do not fit", x, w, b)
	}
	return tensor.Shape{x[0], w[1]}, nil
}

func (linear[F]) forward(out *tensor.Dense, in []*tensor.Dense) error {
	x, w, b, y := Values[F](in[0]), Values[F](in[1]), Values[F](in[2]), Values[F](out)
	n, k, m := in[0].Shape()[0], in[0].Shape()[1], len(b)
	gemmBias(n, m, k, x, w, b, y)
	return nil
}

func (linear[F]) backward(din []*tensor.Dense, dout, _ *tensor.Dense, in []*tensor.Dense) error {
	x, w, dy := Values[F](in[0]), Values[F](in[1]), Values[F](dout)
	n, k, m := in[0].Shape()[0], in[0].Shape()[1], in[1].Shape()[1]
	gemm(false, true, n, k, m, 1, dy, m, w, m, 0, Values[F](din[0]), k) // dx = dy·wᵀ
	gemm(true, false, k, m, n, 1, x, k, dy, m, 0, Values[F](din[1]), m) // dw = xᵀ·dy
	// db sums dy's rows: split by columns, each summed over the rows in order, so the split
	// does not change it.
	db := Values[F](din[2])
	clear(db)
	parallel(m, n, func(_, lo, hi int) { addRows(db[lo:hi], dy[lo:], n, m) })
	return nil
}

// Add returns a + b for tensors of the same shape. Its backward pass hands the output gradient
// to both inputs unchanged, with no op and no copy.
func Add(a, b *G.Node) (*G.Node, error) {
	k, err := byDtype(a, add[float32]{}, add[float64]{})
	if err != nil {
		return nil, err
	}
	return apply(k, a, b)
}

type add[F float] struct{}

func (add[F]) String() string                                                          { return "Add" }
func (add[F]) signature() ([]hm.Type, hm.Type)                                         { return []hm.Type{floats(2), floats(2)}, floats(2) }
func (add[F]) diffWRT() []bool                                                         { return []bool{true, true} }
func (add[F]) passesGradient()                                                         {}
func (add[F]) backward(_ []*tensor.Dense, _, _ *tensor.Dense, _ []*tensor.Dense) error { return nil }

func (add[F]) shape(in []tensor.Shape) (tensor.Shape, error) {
	if !in[0].Eq(in[1]) {
		return nil, errors.Errorf("Add: shapes %v and %v differ", in[0], in[1])
	}
	return in[0].Clone(), nil
}

func (add[F]) forward(out *tensor.Dense, in []*tensor.Dense) error {
	a, b, y := Values[F](in[0]), Values[F](in[1]), Values[F](out)
	parallel(len(y), 2, func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			y[i] = a[i] + b[i]
		}
	})
	return nil
}

// GELU applies the tanh approximation of the Gaussian error linear unit elementwise, as GPT-2
// and PyTorch's gelu(approximate="tanh") do.
func GELU(x *G.Node) (*G.Node, error) {
	k, err := byDtype(x, &gelu[float32]{}, &gelu[float64]{})
	if err != nil {
		return nil, err
	}
	return apply(k, x)
}

type gelu[F float] struct {
	keep bool
	t    []F // tanh of each element, kept for the backward pass
}

const (
	geluC = 0.7978845608028654 // √(2/π)
	geluA = 0.044715
)

func (*gelu[F]) String() string                                { return "GELU" }
func (*gelu[F]) signature() ([]hm.Type, hm.Type)               { return []hm.Type{floats(2)}, floats(2) }
func (*gelu[F]) diffWRT() []bool                               { return []bool{true} }
func (*gelu[F]) shape(in []tensor.Shape) (tensor.Shape, error) { return in[0].Clone(), nil }
func (k *gelu[F]) willDifferentiate()                          { k.keep = true }

func (k *gelu[F]) forward(out *tensor.Dense, in []*tensor.Dense) error {
	x, y := Values[F](in[0]), Values[F](out)
	if k.keep && len(k.t) != len(x) {
		k.t = make([]F, len(x))
	}
	// Split in blocks of eight, so that each element takes the same path (the assembly's eight
	// at a time, or the Go loop's tail) whatever the number of workers: the two round apart.
	parallel((len(x)+7)/8, 8*30, func(_, lo, hi int) {
		lo, hi = 8*lo, min(8*hi, len(x))
		if vectorGELU[F]() {
			n8 := (hi - lo) &^ 7
			var tp *float32
			if k.keep {
				tp = (*float32)(unsafe.Pointer(&k.t[lo]))
			}
			if n8 > 0 {
				geluForward8((*float32)(unsafe.Pointer(&x[lo])), (*float32)(unsafe.Pointer(&y[lo])), tp, n8)
			}
			lo += n8
		}
		for i := lo; i < hi; i++ {
			v := x[i]
			t := tanh(geluC * (v + geluA*v*v*v))
			y[i] = 0.5 * v * (1 + t)
			if k.keep {
				k.t[i] = t
			}
		}
	})
	return nil
}

// vectorGELU reports whether the float32 GELU runs in assembly, eight elements at a time.
func vectorGELU[F float]() bool { return haveAVX2 && unsafe.Sizeof(F(0)) == 4 }

func (k *gelu[F]) backward(din []*tensor.Dense, dout, _ *tensor.Dense, in []*tensor.Dense) error {
	x, dy, dx := Values[F](in[0]), Values[F](dout), Values[F](din[0])
	parallel((len(x)+7)/8, 8*10, func(_, lo, hi int) { // in blocks of eight, as forward
		lo, hi = 8*lo, min(8*hi, len(x))
		if vectorGELU[F]() {
			if n8 := (hi - lo) &^ 7; n8 > 0 {
				geluBackward8((*float32)(unsafe.Pointer(&x[lo])), (*float32)(unsafe.Pointer(&k.t[lo])),
					(*float32)(unsafe.Pointer(&dy[lo])), (*float32)(unsafe.Pointer(&dx[lo])), n8)
				lo += n8
			}
		}
		for i := lo; i < hi; i++ {
			v, t := x[i], k.t[i]
			d := 0.5*(1+t) + 0.5*v*(1-t*t)*geluC*(1+3*geluA*v*v)
			dx[i] = dy[i] * d
		}
	})
	return nil
}
