package nn

// softmaxRows turns the scores of queries i0..i1−1 of a (sequence, head) task, rows ld apart in
// p from query i0's, into probabilities over keys 0..i: each query's scale and bias, a softmax
// over its keys two rows at a time, and the attention measure's statistics. With keepRaw it
// first keeps each row's scores, for a learned query scale's gradient. With a window, the keys
// before it get probability 0 exactly, so that the backward pass, which multiplies by p, leaves
// them out as it leaves out future keys.
func (k *attention[F]) softmaxRows(p []F, ld, task, h, i0, i1 int, s *attnScratch[F], keepRaw bool) {
	t, st := k.cfg.SeqLen, k.cfg.Stats
	for i := i0; i < i1; {
		n := min(2, i1-i) // rows i, and i+1 if there is one
		if w := k.cfg.Window; w > 0 && i+n > w {
			n = 1 // row i+1's window leaves out key 0: it is not row i plus a key, as softmaxPair has it
		}
		for r := i; r < i+n; r++ {
			lo := k.cfg.firstKey(r)
			row := p[(r-i0)*ld+lo : (r-i0)*ld+r+1]
			if keepRaw {
				copy(k.raw[(task*t+r)*t+lo:], row)
			}
			if k.gate != nil {
				s.g = k.gate[(task*t+r)*t+lo : (task*t+r)*t+r+1] // copeRow keeps the row's gates there
			}
			k.adjust(row, h, r, lo, s)
		}
		if row := p[(i-i0)*ld : (i-i0+1)*ld]; n == 2 {
			softmaxPair(row, p[(i+1-i0)*ld:(i+2-i0)*ld], i+1)
		} else {
			lo := k.cfg.firstKey(i)
			clear(row[:lo])
			softmaxPrefix(row[lo:], i+1-lo)
		}
		for r := i; st != nil && r < i+n; r++ {
			setRow(st, task*t+r, p[(r-i0)*ld:(r-i0)*ld+r+1])
		}
		i += n
	}
}

// softmaxPrefix replaces row[:n] by its softmax and zeroes the rest (the future keys).
func softmaxPrefix[F float](row []F, n int) {
	mx := row[0]
	for _, x := range row[1:n] {
		if x > mx {
			mx = x
		}
	}
	inv := F(1 / expSum(row[:n], row[:n], mx))
	for j := range row[:n] {
		row[j] *= inv
	}
	clear(row[n:])
}

// softmaxPair is softmaxPrefix of a over its first n values and of b over its first n+1, a
// causal row and the next: the same values to the bit (TestSoftmaxPairIsPrefix), with the two
// rows' sums of exponentials, each a chain of additions, run side by side.
func softmaxPair[F float](a, b []F, n int) {
	ma, mb := a[0], b[0]
	for j, x := range a[1:n] {
		if x > ma {
			ma = x
		}
		if y := b[j+1]; y > mb {
			mb = y
		}
	}
	if b[n] > mb {
		mb = b[n]
	}
	expShiftRow(a[:n], ma)
	expShiftRow(b[:n+1], mb)
	var sa, sb float64
	for j, x := range a[:n] {
		sa += float64(x)
		sb += float64(b[j])
	}
	sb += float64(b[n])
	ia, ib := F(1/sa), F(1/sb)
	for j := range a[:n] {
		a[j] *= ia
		b[j] *= ib
	}
	b[n] *= ib
	clear(a[n:])
	clear(b[n+1:])
}

// softmaxBackward takes one (sequence, head) task's dp = do·vᵀ in ds through the softmax, row by
// row: ds = p·(dp - Σ p·dp), times the score scale (and the row's query scale, if any). The sums
// Σ p·dp, each a chain of additions, are taken two rows at a time, side by side. A non-nil col
// gets the column sums of ds before the scale, the gradient of the forget gates' bias.
func (k *attention[F]) softmaxBackward(task, h int, pt, ds, qscale []F, scale F, col []float64) {
	t := k.cfg.SeqLen
	i := 0
	for ; i+2 <= t; i += 2 {
		pa, da := pt[i*t:i*t+i+1], ds[i*t:(i+1)*t]
		pb, db := pt[(i+1)*t:(i+1)*t+i+2], ds[(i+1)*t:(i+2)*t]
		da, pb, db = da[:len(pa)], pb[:len(pa)+1], db[:len(pa)+1]
		var dotA, dotB float64
		for j, p := range pa {
			dotA += float64(p) * float64(da[j])
			dotB += float64(pb[j]) * float64(db[j])
		}
		dotB += float64(pb[i+1]) * float64(db[i+1])
		k.softmaxBackwardRow(task, h, i, pa, ds[i*t:(i+1)*t], dotA, qscale, scale, col)
		k.softmaxBackwardRow(task, h, i+1, pb, ds[(i+1)*t:(i+2)*t], dotB, qscale, scale, col)
	}
	if i < t {
		pr, dr := pt[i*t:i*t+i+1], ds[i*t:(i+1)*t]
		var dot float64
		for j, p := range pr {
			dot += float64(p) * float64(dr[j])
		}
		k.softmaxBackwardRow(task, h, i, pr, dr, dot, qscale, scale, col)
	}
}

// softmaxBackwardRow is softmaxBackward's row i, given its sum dot = Σ p·dp over its probabilities
// pr: the softmax's gradient g = p·(dp − dot), and the stages' bookkeeping that rowGrad does for
// the other normalisers, in one pass over the row. As two passes (g in place, then rowGrad) it
// made the attention's backward pass a fifth slower on config C (cmd/bench -config C -ops: 33
// ms a step against 27), so it writes rowGrad's loop again with g computed in it; the numbers
// are the same to the bit.
func (k *attention[F]) softmaxBackwardRow(task, h, i int, pr, dr []F, dot float64, qscale []F, scale F, col []float64) {
	t := k.cfg.SeqLen
	rowScale := scale
	if qscale != nil {
		rowScale = qscale[h*t+i] * scale
	}
	var sg float64
	for j, p := range pr {
		g := F(float64(p) * (float64(dr[j]) - dot))
		if k.cfg.LearnBias {
			pr[j] = g
		}
		if k.raw != nil {
			sg += float64(g) * float64(k.raw[(task*t+i)*t+j])
		}
		if col != nil {
			col[j] += float64(g)
		}
		dr[j] = g * rowScale
	}
	if k.raw != nil {
		k.scaleGrad[task*t+i] = sg
	}
	clear(dr[len(pr):])
}
