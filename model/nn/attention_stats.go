package nn

import "math"

// AttentionStats holds, summed over the sequences of every forward pass, the entropy of each
// head's attention distribution at each query position and the share of its mass on keys at
// least Far positions back: the quantities the log-n and Scalable-Softmax papers argue from
// (attention fading over more keys than training showed).
type AttentionStats struct {
	// Far is the distance from which a key counts as far: the training length.
	Far int
	// Entropy and FarMass hold, at h·n+i for a sequence length n, the sums over Sequences of
	// head h's entropy (in nats) and far mass at query i.
	Entropy, FarMass []float64
	Sequences        int

	ent, far []float64 // per (sequence, head, query), so that the sums do not depend on the split
}

// add sums one forward pass's per-sequence values, in order.
func (st *AttentionStats) add(batch, heads, n int) {
	if len(st.Entropy) != heads*n {
		st.Entropy, st.FarMass, st.Sequences = make([]float64, heads*n), make([]float64, heads*n), 0
	}
	for b := 0; b < batch; b++ {
		for i := range st.Entropy {
			st.Entropy[i] += st.ent[b*heads*n+i]
			st.FarMass[i] += st.far[b*heads*n+i]
		}
	}
	st.Sequences += batch
}

// rowStats is the entropy of a distribution p over keys 0..i and its mass on keys j ≤ i−far.
func rowStats[F float](p []F, far int) (entropy, farMass float64) {
	i := len(p) - 1
	for j, x := range p {
		if x <= 0 {
			continue
		}
		entropy -= float64(x) * math.Log(float64(x))
		if i-j >= far {
			farMass += float64(x)
		}
	}
	return entropy, farMass
}
