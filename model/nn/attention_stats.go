package nn

import "math"

// SinkThreshold is the share of a head's attention on a sequence's first token, averaged over
// the sequence's queries, above which the head counts as a sink in that sequence: ε = 0.3, as
// Gu et al. 2025 ("When Attention Sink Emerges in Language Models", arXiv 2410.10781, §3.1)
// define the sink rate and softpick's calculate_sink_rate (zaydzuhri/softpick-attention)
// computes it.
const SinkThreshold = 0.3

// AttentionStats holds, summed over the sequences of every forward pass, the entropy of each
// head's attention distribution at each query position, the share of its mass on keys at
// least Far positions back and its weight on the first key: the quantities the log-n and
// Scalable-Softmax papers argue from (attention fading over more keys than training showed)
// and the one attention sinks are measured by.
type AttentionStats struct {
	// Far is the distance from which a key counts as far: the training length.
	Far int
	// Entropy, FarMass and First hold, at h·n+i for a sequence length n, the sums over
	// Sequences of head h's entropy (in nats), far mass and weight on key 0 at query i.
	Entropy, FarMass, First []float64
	// Sinks holds at h the number of sequences in which head h's weight on key 0, averaged over
	// the sequence's queries, exceeds SinkThreshold.
	Sinks     []int
	Sequences int

	ent, far, first []float64 // per (sequence, head, query), so that the sums do not depend on the split
}

// add sums one forward pass's per-sequence values, in order.
func (st *AttentionStats) add(batch, heads, n int) {
	if len(st.Entropy) != heads*n {
		st.Entropy, st.FarMass, st.First = make([]float64, heads*n), make([]float64, heads*n), make([]float64, heads*n)
		st.Sinks, st.Sequences = make([]int, heads), 0
	}
	for b := 0; b < batch; b++ {
		for i := range st.Entropy {
			st.Entropy[i] += st.ent[b*heads*n+i]
			st.FarMass[i] += st.far[b*heads*n+i]
			st.First[i] += st.first[b*heads*n+i]
		}
		for h := range heads {
			var sum float64
			for _, x := range st.first[(b*heads+h)*n : (b*heads+h+1)*n] {
				sum += x
			}
			if sum/float64(n) > SinkThreshold {
				st.Sinks[h]++
			}
		}
	}
	st.Sequences += batch
}

// setRow records row x's statistics from its weights p over keys 0..i.
func setRow[F float](st *AttentionStats, x int, p []F) {
	st.ent[x], st.far[x] = rowStats(p, st.Far)
	st.first[x] = float64(p[0])
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
