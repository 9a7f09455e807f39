package stock

import (
	"math"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"extrapolate/model/nn"
)

// copeScores is CoPE's term in the scores' shape (b·h, t, t), written with stock ops from the
// reference's definition rather than the kernel's: the gates σ(raw) times the visible keys
// (mask 0, the rest −1e9), their sums from each key to the query as a product with the constant
// matrix U (U[k][j] = 1 for j ≤ k), clamped as p − relu(p − (npos−1)), and the interpolation
// between ⌊p⌋ and ⌈p⌉ as Σ_m z_m·relu(1 − |p − m|), the hat functions that are its weights, with
// z = q·e/√d for the layer's slice e of the embeddings.
func copeScores(qh, raw, emb *G.Node, mask []float64, cfg nn.AttentionConfig) *G.Node {
	g, dt := qh.Graph(), qh.Dtype()
	b, t, h := cfg.Batch, cfg.SeqLen, cfg.Heads
	hd, npos := emb.Shape()[1], emb.Shape()[2]
	seen := make([]float64, len(mask))
	for x, m := range mask {
		if m == 0 {
			seen[x] = 1
		}
	}
	gates := G.Must(G.HadamardProd(G.Must(G.Sigmoid(raw)), table(g, dt, seen, b*h, t, t)))
	upper := make([]float64, b*h*t*t)
	for bh := 0; bh < b*h; bh++ {
		for k := 0; k < t; k++ {
			for j := 0; j <= k; j++ {
				upper[(bh*t+k)*t+j] = 1
			}
		}
	}
	p := G.Must(G.BatchedMatMul(gates, table(g, dt, upper, b*h, t, t)))
	p = G.Must(G.Sub(p, G.Must(G.Rectify(G.Must(G.Sub(p, constant(qh, float64(npos-1))))))))
	n := b * h * t * t
	ones, ms := make([]float64, npos), make([]float64, n*npos)
	for x := range ms {
		ones[x%npos], ms[x] = 1, float64(x%npos)
	}
	col := G.Must(G.Reshape(p, tensor.Shape{n, 1}))
	dist := G.Must(G.Sub(G.Must(G.Mul(col, table(g, dt, ones, 1, npos))), table(g, dt, ms, n, npos))) // p − m
	hat := G.Must(G.Rectify(G.Must(G.Sub(constant(qh, 1), G.Must(G.Abs(dist))))))
	hat = G.Must(G.Reshape(hat, tensor.Shape{b * h * t, t, npos}))
	e := G.Must(G.Slice(emb, G.S(cfg.CoPELayer)))
	z := G.Must(G.Mul(G.Must(G.Reshape(qh, tensor.Shape{b * h * t, hd})), e))
	z = G.Must(G.Mul(z, constant(qh, 1/math.Sqrt(float64(hd)))))
	z = G.Must(G.Reshape(z, tensor.Shape{b * h * t, npos, 1}))
	return G.Must(G.Reshape(G.Must(G.BatchedMatMul(hat, z)), tensor.Shape{b * h, t, t}))
}
