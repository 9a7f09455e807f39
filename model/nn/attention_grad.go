package nn

// queryScaleGrad writes the learned query scale's gradient, each (head, position)'s sums summed
// over the sequences in order, as the bias's gradient is.
func (k *attention[F]) queryScaleGrad(ds []F) {
	c := k.cfg
	t := c.SeqLen
	for h := 0; h < c.Heads; h++ {
		for i := 0; i < t; i++ {
			var sum float64
			for b := 0; b < c.Batch; b++ {
				sum += k.scaleGrad[(b*c.Heads+h)*t+i]
			}
			ds[h*t+i] = F(sum)
		}
	}
}

// biasGrad sums the bias's gradient, which the backward pass left in k.p for each (sequence,
// head), over the sequences, and for a bias by distance over the queries: in a fixed order, so
// the sum is the same whatever the number of workers.
func (k *attention[F]) biasGrad(db []F) {
	c := k.cfg
	t := c.SeqLen
	if k.biasAcc == nil {
		k.biasAcc = make([][]float64, c.Heads)
		for h := range k.biasAcc {
			k.biasAcc[h] = make([]float64, t*t)
		}
		if c.PositionIDs != nil && c.Bias == ByDistance {
			k.distAcc = make([][]float64, c.Heads)
			for h := range k.distAcc {
				k.distAcc[h] = make([]float64, c.PositionRange)
			}
		}
	}
	parallel(c.Heads, c.Batch*t*t, func(_, lo, hi int) {
		for h := lo; h < hi; h++ {
			acc := k.biasAcc[h]
			clear(acc)
			for b := 0; b < c.Batch; b++ {
				g := k.p[(b*c.Heads+h)*t*t : (b*c.Heads+h+1)*t*t]
				for i := 0; i < t; i++ {
					for j := 0; j <= i; j++ {
						acc[i*t+j] += float64(g[i*t+j])
					}
				}
			}
			if c.PositionIDs != nil {
				k.biasGradAt(db, acc, h)
				continue
			}
			if c.Bias == PerQuery {
				for x, v := range acc {
					db[h*t*t+x] = F(v)
				}
				continue
			}
			for δ := 0; δ < t; δ++ {
				var sum float64
				for i := δ; i < t; i++ {
					sum += acc[i*t+i-δ]
				}
				db[h*t+δ] = F(sum)
			}
		}
	})
}
