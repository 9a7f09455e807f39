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
	partial    []float64 // per chunk of rows, sums of the gain and bias gradients
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
		r := lo
		for ; r+4 <= hi; r += 4 {
			k.stats4(x, d, r)
		}
		for ; r < hi; r++ {
			k.stats(x, d, r)
		}
		for r := lo; r < hi; r++ {
			mean, rstd := k.mean[r], k.rstd[r]
			yr := y[r*d : (r+1)*d]
			for i, v := range x[r*d : (r+1)*d] {
				yr[i] = F((float64(v)-mean)*rstd)*g[i] + b[i]
			}
		}
	})
	return nil
}

// stats sets row r's mean and reciprocal standard deviation: two sums over the row, each a chain
// of additions, one at a time.
func (k *layerNorm[F]) stats(x []F, d, r int) {
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
	k.mean[r], k.rstd[r] = mean, 1/math.Sqrt(ss/float64(d)+k.eps)
}

// stats4 is stats for rows r to r+3 at once. A row's sum waits on each addition before the
// next; four rows' sums are independent, so the CPU runs them side by side. Each is the same
// sum, in the same order, as stats's (TestLayerNormIsRowByRow).
func (k *layerNorm[F]) stats4(x []F, d, r int) {
	x0, x1, x2, x3 := x[r*d:(r+1)*d], x[(r+1)*d:(r+2)*d], x[(r+2)*d:(r+3)*d], x[(r+3)*d:(r+4)*d]
	x1, x2, x3 = x1[:len(x0)], x2[:len(x0)], x3[:len(x0)]
	var s0, s1, s2, s3 float64
	for i, v := range x0 {
		s0 += float64(v)
		s1 += float64(x1[i])
		s2 += float64(x2[i])
		s3 += float64(x3[i])
	}
	n := float64(d)
	m0, m1, m2, m3 := s0/n, s1/n, s2/n, s3/n
	var q0, q1, q2, q3 float64
	for i, v := range x0 {
		c0, c1, c2, c3 := float64(v)-m0, float64(x1[i])-m1, float64(x2[i])-m2, float64(x3[i])-m3
		q0 += c0 * c0
		q1 += c1 * c1
		q2 += c2 * c2
		q3 += c3 * c3
	}
	k.mean[r], k.rstd[r] = m0, 1/math.Sqrt(q0/n+k.eps)
	k.mean[r+1], k.rstd[r+1] = m1, 1/math.Sqrt(q1/n+k.eps)
	k.mean[r+2], k.rstd[r+2] = m2, 1/math.Sqrt(q2/n+k.eps)
	k.mean[r+3], k.rstd[r+3] = m3, 1/math.Sqrt(q3/n+k.eps)
}

func (k *layerNorm[F]) backward(din []*tensor.Dense, dout, _ *tensor.Dense, in []*tensor.Dense) error {
	x, g, dy := Values[F](in[0]), Values[F](in[1]), Values[F](dout)
	dx, dg, db := Values[F](din[0]), Values[F](din[1]), Values[F](din[2])
	n, d := in[0].Shape()[0], in[0].Shape()[1]
	// dx = rstd·(ĝ - mean(ĝ) - x̂·mean(ĝ·x̂)) with ĝ = dy·g; rows are independent.
	parallel(n, 10*d, func(_, lo, hi int) {
		r := lo
		for ; r+2 <= hi; r += 2 {
			sg0, sgx0, sg1, sgx1 := k.gradSums2(x, dy, g, d, r)
			k.rowGrad(x, dy, g, dx, d, r, sg0, sgx0)
			k.rowGrad(x, dy, g, dx, d, r+1, sg1, sgx1)
		}
		if r < hi {
			sg, sgx := k.gradSums(x, dy, g, d, r)
			k.rowGrad(x, dy, g, dx, d, r, sg, sgx)
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
			r, end := c*per, min(n, (c+1)*per)
			for ; r+2 <= end; r += 2 {
				// Two rows a pass, each column's sums still taken row by row.
				m0, s0, m1, s1 := k.mean[r], k.rstd[r], k.mean[r+1], k.rstd[r+1]
				x0, y0, x1, y1 := x[r*d:(r+1)*d], dy[r*d:(r+1)*d], x[(r+1)*d:(r+2)*d], dy[(r+1)*d:(r+2)*d]
				x0, y0, x1, y1, sg, sb := x0[:d], y0[:d], x1[:d], y1[:d], sg[:d], sb[:d]
				for i, v := range x0 {
					g0, g1 := float64(y0[i]), float64(y1[i])
					sg[i] = sg[i] + g0*(float64(v)-m0)*s0 + g1*(float64(x1[i])-m1)*s1
					sb[i] = sb[i] + g0 + g1
				}
			}
			for ; r < end; r++ {
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

// gradSums is row r's mean of ĝ = dy·g and of ĝ·x̂: two chains of additions over the row.
func (k *layerNorm[F]) gradSums(x, dy, g []F, d, r int) (sg, sgx float64) {
	mean, rstd := k.mean[r], k.rstd[r]
	xr, dyr := x[r*d:(r+1)*d], dy[r*d:(r+1)*d]
	for i, v := range xr {
		xh := (float64(v) - mean) * rstd
		gh := float64(dyr[i]) * float64(g[i])
		sg += gh
		sgx += gh * xh
	}
	return sg / float64(d), sgx / float64(d)
}

// gradSums2 is gradSums for rows r and r+1 at once: four independent chains the CPU runs side
// by side, each the same sum in the same order as gradSums's.
func (k *layerNorm[F]) gradSums2(x, dy, g []F, d, r int) (sg0, sgx0, sg1, sgx1 float64) {
	m0, s0, m1, s1 := k.mean[r], k.rstd[r], k.mean[r+1], k.rstd[r+1]
	x0, y0, x1, y1 := x[r*d:(r+1)*d], dy[r*d:(r+1)*d], x[(r+1)*d:(r+2)*d], dy[(r+1)*d:(r+2)*d]
	x0, y0, x1, y1, g = x0[:d], y0[:d], x1[:d], y1[:d], g[:d]
	for i, v := range x0 {
		gi := float64(g[i])
		xh0, gh0 := (float64(v)-m0)*s0, float64(y0[i])*gi
		xh1, gh1 := (float64(x1[i])-m1)*s1, float64(y1[i])*gi
		sg0 += gh0
		sgx0 += gh0 * xh0
		sg1 += gh1
		sgx1 += gh1 * xh1
	}
	n := float64(d)
	return sg0 / n, sgx0 / n, sg1 / n, sgx1 / n
}

// rowGrad writes row r of dx = rstd·(ĝ - mean(ĝ) - x̂·mean(ĝ·x̂)), given the two means.
func (k *layerNorm[F]) rowGrad(x, dy, g, dx []F, d, r int, sg, sgx float64) {
	mean, rstd := k.mean[r], k.rstd[r]
	xr, dyr, dxr := x[r*d:(r+1)*d], dy[r*d:(r+1)*d], dx[r*d:(r+1)*d]
	for i, v := range xr {
		xh := (float64(v) - mean) * rstd
		gh := float64(dyr[i]) * float64(g[i])
		dxr[i] = F(rstd * (gh - sg - xh*sgx))
	}
}
