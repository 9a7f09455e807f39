package attention

import (
	"math"
	"testing"

	"extrapolate/model/nn"
)

// TestAttentionBinsByHand bins statistics summed from two hand-built windows of 6 tokens, one
// head, far keys at least 2 back: in the first, each query attends uniformly to its keys; in the
// second, query i puts half its attention on key 0 and half on itself (all on key 0 at i = 0).
// The expected bins are the closed forms: uniform attention over i+1 keys has entropy log(i+1)
// and far mass (i−1)/(i+1); the halves have entropy log 2 and far mass 1/2 from i = 2 on.
func TestAttentionBinsByHand(t *testing.T) {
	const n, far = 6, 2
	st := &nn.AttentionStats{Far: far, Entropy: make([]float64, n), FarMass: make([]float64, n), Sequences: 2}
	for i := range n {
		uniform, halves := make([]float64, i+1), make([]float64, i+1)
		for j := range uniform {
			uniform[j] = 1 / float64(i+1)
		}
		halves[0] += 0.5
		halves[i] += 0.5
		for _, p := range [][]float64{uniform, halves} {
			for j, x := range p {
				if x > 0 {
					st.Entropy[i] -= x * math.Log(x)
				}
				if i-j >= far {
					st.FarMass[i] += x
				}
			}
		}
	}
	ln := math.Log
	want := []Bin{
		{From: 0, To: 0, Entropy: 0, Uniform: 0, Far: 0},
		{From: 1, To: 1, Entropy: ln(2), Uniform: ln(2), Far: 0},
		{From: 2, To: 3, Entropy: ((ln(3)+ln(2))/2 + (ln(4)+ln(2))/2) / 2, Uniform: (ln(3) + ln(4)) / 2,
			Far: ((1.0/3+0.5)/2 + (2.0/4+0.5)/2) / 2},
		{From: 4, To: 5, Entropy: ((ln(5)+ln(2))/2 + (ln(6)+ln(2))/2) / 2, Uniform: (ln(5) + ln(6)) / 2,
			Far: ((3.0/5+0.5)/2 + (4.0/6+0.5)/2) / 2},
	}
	got := octaveBins(st, 0, n)
	if len(got) != len(want) {
		t.Fatalf("%d bins %+v, want %d", len(got), got, len(want))
	}
	for k, w := range want {
		g := got[k]
		if g.From != w.From || g.To != w.To || math.Abs(g.Entropy-w.Entropy) > 1e-12 || math.Abs(g.Uniform-w.Uniform) > 1e-12 || math.Abs(g.Far-w.Far) > 1e-12 {
			t.Errorf("bin %d: %+v, want %+v", k, g, w)
		}
	}
	if u := uniformLastOctave(n); math.Abs(u-want[3].Uniform) > 1e-12 {
		t.Errorf("uniform entropy of the last octave %v, want %v", u, want[3].Uniform)
	}
}

// TestSpearman checks the rank correlation on small cases worked by hand.
func TestSpearman(t *testing.T) {
	for _, c := range []struct {
		x, y []float64
		want float64
	}{
		{[]float64{1, 2, 3}, []float64{10, 20, 30}, 1},
		{[]float64{1, 2, 3}, []float64{3, 2, 1}, -1},
		// Ranks 1, 2, 3, 4 against 2, 1, 4, 3: 1 − 6·4/(4·15) = 0.6.
		{[]float64{0.1, 0.2, 0.3, 0.4}, []float64{5, 1, 9, 7}, 0.6},
		// A tie: ranks 1.5, 1.5, 3 against 1, 2, 3: correlation 0.5·√3 ≈ 0.866.
		{[]float64{1, 1, 2}, []float64{1, 2, 3}, math.Sqrt(3) / 2},
	} {
		if got := spearman(c.x, c.y); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("spearman(%v, %v) = %v, want %v", c.x, c.y, got, c.want)
		}
	}
}
