package nn

import (
	"math"

	"github.com/chewxy/hm"
	"github.com/pkg/errors"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// LayerNorm normalises each row of x (n, d) to zero mean and unit variance, then scales by g and
// shifts by b (both of length d).
func LayerNorm(x, g, b *G.Node, eps float64) (*G.Node, error) {
	k, err := byDtype(x, &layerNorm[float32]{eps: eps}, &layerNorm[float64]{eps: eps})
	if err != nil {
		return nil, err
	}
	return apply(k, x, g, b)
}

type layerNorm[F float] struct {
	eps        float64
	mean, rstd []float64 // per row, kept for the backward pass
	partial    []float64 // per worker sums of the gain and bias gradients
}

func (*layerNorm[F]) String() string { return "LayerNorm" }
func (*layerNorm[F]) signature() ([]hm.Type, hm.Type) {
	return []hm.Type{floats(2), floats(1), floats(1)}, floats(2)
}
func (*layerNorm[F]) diffWRT() []bool { return []bool{true, true, true} }

func (*layerNorm[F]) shape(in []tensor.Shape) (tensor.Shape, error) {
	x, g, b := in[0], in[1], in[2]
	if len(x) != 2 || len(g) != 1 || len(b) != 1 || g[0] != x[1] || b[0] != x[1] {
		return nil, errors.Errorf("LayerNorm: shapes x %v, g %v, b %v do not fit", x, g, b)
	}
	return x.Clone(), nil
}

func (k *layerNorm[F]) forward(out *tensor.Dense, in []*tensor.Dense) error {
	x, g, b, y := Values[F](in[0]), Values[F](in[1]), Values[F](in[2]), Values[F](out)
	n, d := in[0].Shape()[0], in[0].Shape()[1]
	if len(k.mean) != n {
		k.mean, k.rstd = make([]float64, n), make([]float64, n)
	}
	parallel(n, 8*d, func(_, lo, hi int) {
		for r := lo; r < hi; r++ {
			row := x[r*d : (r+1)*d]
			var sum float64
			for _, v := range row {
				sum += float64(v)
			}
			mean := sum / float64(d)
			var ss float64
			for _, v := range row {
				c := float64(v) - mean
				ss += c * c
			}
			rstd := 1 / math.Sqrt(ss/float64(d)+k.eps)
			k.mean[r], k.rstd[r] = mean, rstd
			yr := y[r*d : (r+1)*d]
			for i, v := range row {
				yr[i] = F((float64(v)-mean)*rstd)*g[i] + b[i]
			}
		}
	})
	return nil
}

func (k *layerNorm[F]) backward(din []*tensor.Dense, dout, _ *tensor.Dense, in []*tensor.Dense) error {
	x, g, dy := Values[F](in[0]), Values[F](in[1]), Values[F](dout)
	dx, dg, db := Values[F](din[0]), Values[F](din[1]), Values[F](din[2])
	n, d := in[0].Shape()[0], in[0].Shape()[1]
	// dx = rstd·(ĝ - mean(ĝ) - x̂·mean(ĝ·x̂)) with ĝ = dy·g; rows are independent.
	parallel(n, 10*d, func(_, lo, hi int) {
		for r := lo; r < hi; r++ {
			mean, rstd := k.mean[r], k.rstd[r]
			xr, dyr, dxr := x[r*d:(r+1)*d], dy[r*d:(r+1)*d], dx[r*d:(r+1)*d]
			var sg, sgx float64
			for i, v := range xr {
				xh := (float64(v) - mean) * rstd
				gh := float64(dyr[i]) * float64(g[i])
				sg += gh
				sgx += gh * xh
			}
			sg /= float64(d)
			sgx /= float64(d)
			for i, v := range xr {
				xh := (float64(v) - mean) * rstd
				gh := float64(dyr[i]) * float64(g[i])
				dxr[i] = F(rstd * (gh - sg - xh*sgx))
			}
		}
	})
	// dg and db sum over rows. The rows are cut into a fixed number of chunks, whatever the
	// number of CPUs, each summed row by row into its own partial sums, which are then added in
	// chunk order: the result is the same on any machine.
	const chunks = 8
	if len(k.partial) != 2*chunks*d {
		k.partial = make([]float64, 2*chunks*d)
	}
	clear(k.partial)
	per := (n + chunks - 1) / chunks
	parallel(chunks, 3*d*per, func(_, lo, hi int) {
		for c := lo; c < hi; c++ {
			sg, sb := k.partial[2*c*d:(2*c+1)*d], k.partial[(2*c+1)*d:(2*c+2)*d]
			for r := c * per; r < min(n, (c+1)*per); r++ {
				mean, rstd := k.mean[r], k.rstd[r]
				xr, dyr := x[r*d:(r+1)*d], dy[r*d:(r+1)*d]
				for i, v := range xr {
					g := float64(dyr[i])
					sg[i] += g * (float64(v) - mean) * rstd
					sb[i] += g
				}
			}
		}
	})
	for i := 0; i < d; i++ {
		var sdg, sdb float64
		for c := 0; c < chunks; c++ {
			sdg += k.partial[2*c*d+i]
			sdb += k.partial[(2*c+1)*d+i]
		}
		dg[i], db[i] = F(sdg), F(sdb)
	}
	return nil
}
