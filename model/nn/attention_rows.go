package nn

// gather copies head h of sequence b from x (rows of width d) into dst (t, hd).
func (k *attention[F]) gather(dst, x []F, b, h, d int) {
	t := k.cfg.SeqLen
	hd := len(dst) / t
	for i := 0; i < t; i++ {
		copy(dst[i*hd:(i+1)*hd], x[(b*t+i)*d+h*hd:])
	}
}

// rotate applies the rotation with tables cs and sn to each row of x (t, hd) in place, or its
// transpose (the inverse rotation, scaled alike) when inverse is set: row i at its position, i
// or its id, ids[i], for ids not nil.
func (k *attention[F]) rotate(x, cs, sn []F, ids []int, inverse bool) {
	p := k.cfg.Positions
	if p.Pairs == 0 {
		return
	}
	t := k.cfg.SeqLen
	hd := len(x) / t
	for i := 0; i < t; i++ {
		row := x[i*hd : (i+1)*hd]
		at := i
		if ids != nil {
			at = ids[i]
		}
		c, s := cs[at*p.Pairs:(at+1)*p.Pairs], sn[at*p.Pairs:(at+1)*p.Pairs]
		for j := 0; j < p.Pairs; j++ {
			a, b := j, j+p.Pairs
			if p.Interleaved {
				a, b = 2*j, 2*j+1
			}
			cj, sj := c[j], s[j]
			if inverse {
				sj = -sj
			}
			x0, x1 := row[a], row[b]
			row[a] = x0*cj - x1*sj
			row[b] = x1*cj + x0*sj
		}
	}
}

// scatter writes src (t, hd) into head h of sequence b of dst (rows of width d).
func scatter[F float](dst, src []F, b, h, t, d, hd int) {
	for i := 0; i < t; i++ {
		copy(dst[(b*t+i)*d+h*hd:(b*t+i)*d+(h+1)*hd], src[i*hd:(i+1)*hd])
	}
}
