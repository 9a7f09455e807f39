package nn

import (
	"math"
	"math/rand/v2"
	"testing"

	"gorgonia.org/tensor"
)

// layerNormRef is LayerNorm's forward and backward pass written one row and one value at a time,
// as it was before its rows' sums ran side by side: the bits the kernel must give.
func layerNormRef(x, g, b, dy []float32, n, d int, eps float64) (y, dx, dg, db []float32) {
	y, dx, dg, db = make([]float32, n*d), make([]float32, n*d), make([]float32, d), make([]float32, d)
	mean, rstd := make([]float64, n), make([]float64, n)
	for r := 0; r < n; r++ {
		row := x[r*d : (r+1)*d]
		var sum float64
		for _, v := range row {
			sum += float64(v)
		}
		mean[r] = sum / float64(d)
		var ss float64
		for _, v := range row {
			c := float64(v) - mean[r]
			ss += c * c
		}
		rstd[r] = 1 / math.Sqrt(ss/float64(d)+eps)
		for i, v := range row {
			y[r*d+i] = float32((float64(v)-mean[r])*rstd[r])*g[i] + b[i]
		}
	}
	for r := 0; r < n; r++ {
		xr, dyr := x[r*d:(r+1)*d], dy[r*d:(r+1)*d]
		var sg, sgx float64
		for i, v := range xr {
			xh := (float64(v) - mean[r]) * rstd[r]
			gh := float64(dyr[i]) * float64(g[i])
			sg += gh
			sgx += gh * xh
		}
		sg /= float64(d)
		sgx /= float64(d)
		for i, v := range xr {
			xh := (float64(v) - mean[r]) * rstd[r]
			gh := float64(dyr[i]) * float64(g[i])
			dx[r*d+i] = float32(rstd[r] * (gh - sg - xh*sgx))
		}
	}
	const chunks = 8
	per := (n + chunks - 1) / chunks
	partial := make([]float64, 2*chunks*d)
	for c := 0; c < chunks; c++ {
		sg, sb := partial[2*c*d:(2*c+1)*d], partial[(2*c+1)*d:(2*c+2)*d]
		for r := c * per; r < min(n, (c+1)*per); r++ {
			for i, v := range x[r*d : (r+1)*d] {
				gr := float64(dy[r*d+i])
				sg[i] += gr * (float64(v) - mean[r]) * rstd[r]
				sb[i] += gr
			}
		}
	}
	for i := 0; i < d; i++ {
		var sdg, sdb float64
		for c := 0; c < chunks; c++ {
			sdg += partial[2*c*d+i]
			sdb += partial[(2*c+1)*d+i]
		}
		dg[i], db[i] = float32(sdg), float32(sdb)
	}
	return y, dx, dg, db
}

// TestLayerNormIsRowByRow requires the kernel's float32 forward and backward pass to give the
// reference's bits, for row counts on either side of the groups of rows it sums at once and
// widths on either side of its vectors, with values of every size.
func TestLayerNormIsRowByRow(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for _, n := range []int{1, 2, 3, 4, 5, 7, 9, 64, 203} {
		for _, d := range []int{1, 3, 8, 13, 64, 130} {
			vals := func(k int, spread float64) []float32 {
				v := make([]float32, k)
				for i := range v {
					v[i] = float32((rng.Float64()*2 - 1) * spread * math.Pow(10, float64(rng.IntN(5)-2)))
				}
				return v
			}
			x, g, b, dy := vals(n*d, 3), vals(d, 1), vals(d, 1), vals(n*d, 1)
			wy, wdx, wdg, wdb := layerNormRef(x, g, b, dy, n, d, 1e-5)
			k := &layerNorm[float32]{eps: 1e-5}
			dense := func(v []float32, shape ...int) *tensor.Dense {
				return tensor.New(tensor.WithShape(shape...), tensor.WithBacking(append([]float32(nil), v...)))
			}
			in := []*tensor.Dense{dense(x, n, d), dense(g, d), dense(b, d)}
			out := dense(make([]float32, n*d), n, d)
			if err := k.forward(out, in); err != nil {
				t.Fatal(err)
			}
			din := []*tensor.Dense{dense(make([]float32, n*d), n, d), dense(make([]float32, d), d), dense(make([]float32, d), d)}
			if err := k.backward(din, dense(dy, n, d), out, in); err != nil {
				t.Fatal(err)
			}
			for name, pair := range map[string][2][]float32{
				"y": {Values[float32](out), wy}, "dx": {Values[float32](din[0]), wdx},
				"dg": {Values[float32](din[1]), wdg}, "db": {Values[float32](din[2]), wdb},
			} {
				for i := range pair[1] {
					if math.Float32bits(pair[0][i]) != math.Float32bits(pair[1][i]) {
						t.Fatalf("n %d, d %d: %s[%d] = %g, the reference's %g", n, d, name, i, pair[0][i], pair[1][i])
					}
				}
			}
		}
	}
}
