package nn

// The forget gates' bias (FoX, AttentionConfig.LogForget): query i and key j ≤ i of a sequence
// and head get D_ij = Σ_{l=j+1..i} log f_l = c_i − c_j, with c_i = Σ_{l≤i} log f_l. The op
// holds c for one (sequence, head) at a time, seqLen values a worker, in float64: at long
// lengths c runs to thousands (log ½ a token at the gates' start), and the difference of two
// float32 sums would keep few of the bits that matter, those of nearby keys.

// cumulate fills s.cum with the running sum c of the log forget gates of head h in sequence b,
// from the pass's logf (batch·seqLen, heads); nothing without gates.
func (k *attention[F]) cumulate(s *attnScratch[F], b, h int) {
	logf := k.in.logf
	if logf == nil {
		return
	}
	t, heads := k.cfg.SeqLen, k.cfg.Heads
	var c float64
	for i := range s.cum[:t] {
		c += float64(logf[(b*t+i)*heads+h])
		s.cum[i] = c
	}
}

// addForget adds to row, the scores of query i for keys j0, j0+1, …, their bias c_i − c_j.
func addForget[F float](row []F, cum []float64, i, j0 int) {
	ci := cum[i]
	for j, cj := range cum[j0 : j0+len(row)] {
		row[j] += F(ci - cj)
	}
}

// forgetGrad writes the gradient of the log forget gates of head h in sequence b into dlogf,
// from col, the column sums Σ_{i≥j} dS_ij of the gradient dS of the scores (after the
// softmax's backward pass, before the scale).
//
// D_ij = c_i − c_j, so dc_i = Σ_j dS_ij − Σ_{i'} dS_i'i: row i's sum less column i's. Each row
// sum is zero: c_i is added to every score of row i, and the softmax does not change when a row
// is shifted (Σ_j p_ij(dp_ij − Σ_j' p_ij' dp_ij') = 0); so dc_i = −col_i. Then c_i = Σ_{l≤i} log f_l
// gives d log f_l = Σ_{i≥l} dc_i, a running sum from the end. log f_0 is in every c_i, and so in
// no difference: its gradient is 0 exactly, as d log f_l = Σ_{i≥l, j<l} dS_ij has it.
func (k *attention[F]) forgetGrad(dlogf []F, col []float64, b, h int) {
	t, heads := k.cfg.SeqLen, k.cfg.Heads
	var sum float64
	for l := t - 1; l > 0; l-- {
		sum -= col[l]
		dlogf[(b*t+l)*heads+h] = F(sum)
	}
	dlogf[b*t*heads+h] = 0
}
