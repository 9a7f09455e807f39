package nn_test

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"extrapolate/internal/gradcheck"
	"extrapolate/model/nn"
)

// TestCrossEntropyMaskedGradient checks the gradient with some targets left out (negative)
// against finite differences.
func TestCrossEntropyMaskedGradient(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 8))
	gradcheck.Check(t, []gradcheck.Input{
		gradcheck.Var("logits", gradcheck.Rand(rng, 2, 5, 7)),
		gradcheck.Const("targets", gradcheck.Ints(0, -1, 3, -1, 1)),
	}, func(g *G.ExprGraph, x []*G.Node) (*G.Node, error) { return nn.CrossEntropy(x[0], x[1]) })
}

// TestCrossEntropyLeavesOutMaskedRows checks that a row without a target is as if it were not
// there: the loss and the other rows' gradients are, to the bit, those of the batch without it,
// and its own gradient is exactly zero. With float32 and float64, and with every row scored.
func TestCrossEntropyLeavesOutMaskedRows(t *testing.T) {
	const rows, vocab = 6, 9
	for _, dt := range []tensor.Dtype{tensor.Float32, tensor.Float64} {
		rng := rand.New(rand.NewPCG(3, 9))
		logits := gradcheck.Rand(rng, 3, rows, vocab)
		if dt == tensor.Float32 {
			logits = gradcheck.ToF32(logits)
		}
		targets := []int{4, -1, 0, 8, -1, 2}
		loss, grad := crossEntropy(t, logits, targets)
		var kept []int
		for r, x := range targets {
			if x >= 0 {
				kept = append(kept, r)
			}
		}
		wantLoss, wantGrad := crossEntropy(t, selectRows(logits, kept, vocab), selectInts(targets, kept))
		if loss != wantLoss {
			t.Fatalf("%v: loss %.17g with rows masked, %.17g without them", dt, loss, wantLoss)
		}
		for i, r := range kept {
			if got, want := grad[r*vocab:(r+1)*vocab], wantGrad[i*vocab:(i+1)*vocab]; !slices.Equal(got, want) {
				t.Fatalf("%v: row %d's gradient %v with rows masked, %v without them", dt, r, got, want)
			}
		}
		for r, x := range targets {
			if x < 0 && slices.ContainsFunc(grad[r*vocab:(r+1)*vocab], func(g float64) bool { return g != 0 }) {
				t.Fatalf("%v: masked row %d has gradient %v", dt, r, grad[r*vocab:(r+1)*vocab])
			}
		}
	}
}

// TestCrossEntropyNothingScored checks that a batch without a target has loss 0 and gradient 0,
// not NaN.
func TestCrossEntropyNothingScored(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 1))
	loss, grad := crossEntropy(t, gradcheck.Rand(rng, 1, 3, 5), []int{-1, -1, -1})
	if loss != 0 || slices.ContainsFunc(grad, func(g float64) bool { return g != 0 || math.IsNaN(g) }) {
		t.Fatalf("loss %v, gradient %v; want 0 and 0", loss, grad)
	}
}

// crossEntropy runs nn.CrossEntropy forward and backward, in the logits' dtype.
func crossEntropy(t *testing.T, logits *tensor.Dense, targets []int) (float64, []float64) {
	t.Helper()
	g := G.NewGraph()
	x := G.NewMatrix(g, logits.Dtype(), G.WithShape(logits.Shape()...), G.WithName("logits"), G.WithValue(logits.Clone()))
	y := G.NewVector(g, tensor.Int, G.WithShape(len(targets)), G.WithName("targets"), G.WithValue(gradcheck.Ints(targets...)))
	loss, err := nn.CrossEntropy(x, y)
	if err != nil {
		t.Fatal(err)
	}
	grads, err := G.Grad(loss, x)
	if err != nil {
		t.Fatal(err)
	}
	vm := G.NewTapeMachine(g)
	defer vm.Close()
	if err := vm.RunAll(); err != nil {
		t.Fatal(err)
	}
	var out []float64
	switch d := grads[0].Value().Data().(type) {
	case []float32:
		for _, v := range d {
			out = append(out, float64(v))
		}
	case []float64:
		out = append(out, d...)
	}
	return gradcheck.Scalar(loss.Value()), out
}

func selectRows(x *tensor.Dense, rows []int, width int) *tensor.Dense {
	switch d := x.Data().(type) {
	case []float32:
		var out []float32
		for _, r := range rows {
			out = append(out, d[r*width:(r+1)*width]...)
		}
		return tensor.New(tensor.WithShape(len(rows), width), tensor.WithBacking(out))
	default:
		var out []float64
		for _, r := range rows {
			out = append(out, x.Data().([]float64)[r*width:(r+1)*width]...)
		}
		return tensor.New(tensor.WithShape(len(rows), width), tensor.WithBacking(out))
	}
}

func selectInts(x []int, at []int) []int {
	var out []int
	for _, i := range at {
		out = append(out, x[i])
	}
	return out
}
