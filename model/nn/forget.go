package nn

import (
	"math"

	"github.com/chewxy/hm"
	"github.com/pkg/errors"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// LogForget returns the log forget gates of the Forgetting Transformer (FoX), log σ(x·w[layer] +
// b[layer]), for x of shape (n, d), w (layers, d, heads) and b (layers, heads): (n, heads), a
// row per token with the gate of each head, the layout Attention takes with LogForget. It takes
// the whole weights, and gives them a gradient that is zero outside the layer's slice, so that a
// scheme keeps one weight for every layer, as FIRE and KERPLE do, without the graph slicing it.
func LogForget(x, w, b *G.Node, layer int) (*G.Node, error) {
	k, err := byDtype(x, &logForget[float32]{layer: layer}, &logForget[float64]{layer: layer})
	if err != nil {
		return nil, err
	}
	return apply(k, x, w, b)
}

type logForget[F float] struct {
	layer int
	dz    []F // the gradient of the gate logits
}

func (*logForget[F]) String() string { return "LogForget" }
func (*logForget[F]) signature() ([]hm.Type, hm.Type) {
	return []hm.Type{floats(2), floats(3), floats(2)}, floats(2)
}
func (*logForget[F]) diffWRT() []bool { return []bool{true, true, true} }

func (k *logForget[F]) shape(in []tensor.Shape) (tensor.Shape, error) {
	x, w, b := in[0], in[1], in[2]
	if len(x) != 2 || len(w) != 3 || len(b) != 2 || w[1] != x[1] || b[0] != w[0] || b[1] != w[2] || k.layer < 0 || k.layer >= w[0] {
		return nil, errors.Errorf("LogForget: shapes x %v, w %v, b %v do not fit layer %d", x, w, b, k.layer)
	}
	return tensor.Shape{x[0], w[2]}, nil
}

// layerOf returns the layer's weight (d, heads) and bias (heads) within w and b.
func (k *logForget[F]) layerOf(w, b []F, d, heads int) (wl, bl []F) {
	return w[k.layer*d*heads : (k.layer+1)*d*heads], b[k.layer*heads : (k.layer+1)*heads]
}

func (k *logForget[F]) forward(out *tensor.Dense, in []*tensor.Dense) error {
	x, y := Values[F](in[0]), Values[F](out)
	n, d, heads := in[0].Shape()[0], in[0].Shape()[1], in[1].Shape()[2]
	wl, bl := k.layerOf(Values[F](in[1]), Values[F](in[2]), d, heads)
	gemmBias(n, heads, d, x, wl, bl, y)
	for i, z := range y {
		y[i] = F(logSigmoid(float64(z)))
	}
	return nil
}

// logSigmoid is log σ(z) = −softplus(−z), written so that neither exp overflows nor a gate
// near 1 rounds to log 1: min(z, 0) − log(1 + e^−|z|).
func logSigmoid(z float64) float64 {
	return min(z, 0) - math.Log1p(math.Exp(-math.Abs(z)))
}

// backward: d log σ(z)/dz = 1 − σ(z) = −expm1(y), from the output y = log σ(z) itself.
func (k *logForget[F]) backward(din []*tensor.Dense, dout, out *tensor.Dense, in []*tensor.Dense) error {
	x, y, dy := Values[F](in[0]), Values[F](out), Values[F](dout)
	n, d, heads := in[0].Shape()[0], in[0].Shape()[1], in[1].Shape()[2]
	wl, _ := k.layerOf(Values[F](in[1]), Values[F](in[2]), d, heads)
	if len(k.dz) != len(y) {
		k.dz = make([]F, len(y))
	}
	for i, v := range y {
		k.dz[i] = F(-float64(dy[i]) * math.Expm1(float64(v)))
	}
	dx, dw, db := Values[F](din[0]), Values[F](din[1]), Values[F](din[2])
	gemm(false, true, n, d, heads, 1, k.dz, heads, wl, heads, 0, dx, d) // dx = dz·wᵀ
	clear(dw)
	clear(db)
	dwl, dbl := k.layerOf(dw, db, d, heads)
	gemm(true, false, d, heads, n, 1, x, d, k.dz, heads, 0, dwl, heads) // dw = xᵀ·dz
	for h := range dbl {
		var sum float64 // over a few thousand tokens: in float64, in row order
		for r := 0; r < n; r++ {
			sum += float64(k.dz[r*heads+h])
		}
		dbl[h] = F(sum)
	}
	return nil
}
