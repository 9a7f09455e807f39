package measure

import (
	"context"
	"math"
	"math/bits"
	"strings"
	"testing"

	"extrapolate/data"
	"extrapolate/experiments/config"
	"extrapolate/experiments/internal/testrun"
	"extrapolate/model/nn"
	"extrapolate/position"
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
	want := []AttentionBin{
		{From: 0, To: 0, Entropy: 0, Uniform: 0, Far: 0},
		{From: 1, To: 1, Entropy: ln(2), Uniform: ln(2), Far: 0},
		{From: 2, To: 3, Entropy: ((ln(3)+ln(2))/2 + (ln(4)+ln(2))/2) / 2, Uniform: (ln(3) + ln(4)) / 2,
			Far: ((1.0/3+0.5)/2 + (2.0/4+0.5)/2) / 2},
		{From: 4, To: 5, Entropy: ((ln(5)+ln(2))/2 + (ln(6)+ln(2))/2) / 2, Uniform: (ln(5) + ln(6)) / 2,
			Far: ((3.0/5+0.5)/2 + (4.0/6+0.5)/2) / 2},
	}
	got := attentionBins(st, 0, n)
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

// TestAttentionFromDefinition measures attention through a run's evaluation, with the query
// weights zeroed so that every score is the scheme's bias alone: uniform attention for NoPE,
// softmax of the bias by distance for ALiBi, computed here from the scheme's bias. It also checks
// that the measure leaves every perplexity as it was, to the bit.
func TestAttentionFromDefinition(t *testing.T) {
	for _, scheme := range []string{"nope", "alibi"} {
		c := testrun.Config(t, scheme)
		c.Model.Layers = 2
		c.Eval.Measures = []string{"attention"}
		rc := testrun.Resolved(t, c)
		_, s := rc.Schemes()
		m, err := newModel(rc)
		if err != nil {
			t.Fatal(err)
		}
		corpus, err := data.Load(c.Data)
		if err != nil {
			t.Fatal(err)
		}
		ev := &Evaluation{Config: c, Model: m, Scheme: s, TrainScheme: s, Corpus: corpus}
		without, err := ev.Perplexities(context.Background(), s)
		if err != nil {
			t.Fatal(err)
		}
		recs, err := ev.Measure(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for i, l := range recs[0].(*perplexityRun).lengths {
			if *l.Loss != *without[i].Loss {
				t.Fatalf("%s at %d: loss %v with attention statistics, %v without", scheme, l.Length, *l.Loss, *without[i].Loss)
			}
		}
		for _, p := range m.Params {
			if strings.HasSuffix(p.Name, ".wq") || strings.HasSuffix(p.Name, ".bq") {
				clear(p.Value.Data().([]float32))
			}
		}
		if recs, err = ev.Measure(context.Background()); err != nil {
			t.Fatal(err)
		}
		att := recs[len(recs)-1].(*attentionRun)
		checkAttention(t, scheme, s, c, att.lengths)
	}
}

// checkAttention compares a run's attention with the softmax of the scheme's bias (zero when
// it has none), query by query, binned in octaves here.
func checkAttention(t *testing.T, scheme string, s position.Scheme, c config.Config, got []AttentionLength) {
	t.Helper()
	if len(got) != len(c.Eval.Lengths) {
		t.Fatalf("%s: attention at %d lengths, want %d", scheme, len(got), len(c.Eval.Lengths))
	}
	for k, n := range c.Eval.Lengths {
		al := got[k]
		if !al.Applicable || al.Length != n || al.Windows != c.Eval.Tokens/n || len(al.Heads) != c.Model.Layers*c.Model.Heads {
			t.Fatalf("%s at %d: %d heads over %d windows, applicable %v", scheme, n, len(al.Heads), al.Windows, al.Applicable)
		}
		bias := make([]float64, c.Model.Heads*n)
		if b, ok := s.(position.Biaser); ok {
			bb, err := b.Bias(n)
			if err != nil {
				t.Fatal(err)
			}
			bias = bb.Values
			if bias[1] == 0 {
				t.Fatalf("%s: no bias at distance 1: the check would be uniform attention's", scheme)
			}
		}
		for _, hd := range al.Heads {
			want := octaves(n, func(i int) (float64, float64) { return softmaxStats(bias[hd.Head*n:(hd.Head+1)*n], i, c.Train.SeqLen) })
			if len(hd.Bins) != len(want) {
				t.Fatalf("%s at %d, layer %d head %d: %d bins, want %d", scheme, n, hd.Layer, hd.Head, len(hd.Bins), len(want))
			}
			for j, b := range hd.Bins {
				w := want[j]
				if b.From != w.From || b.To != w.To || math.Abs(b.Entropy-w.Entropy) > 1e-5 || math.Abs(b.Far-w.Far) > 1e-5 || math.Abs(b.Uniform-w.Uniform) > 1e-12 {
					t.Fatalf("%s at %d, layer %d head %d: bin %+v, want %+v", scheme, n, hd.Layer, hd.Head, b, w)
				}
			}
		}
	}
}

// softmaxStats is the entropy and far mass of query i's attention when its scores are the
// bias by distance alone.
func softmaxStats(bias []float64, i, far int) (entropy, farMass float64) {
	var z float64
	for j := 0; j <= i; j++ {
		z += math.Exp(bias[i-j])
	}
	for j := 0; j <= i; j++ {
		p := math.Exp(bias[i-j]) / z
		entropy -= p * math.Log(p)
		if i-j >= far {
			farMass += p
		}
	}
	return entropy, farMass
}

// octaves averages per-query values over the queries whose positions have the same bit length:
// 0; 1; 2, 3; 4 to 7; ...
func octaves(n int, at func(i int) (float64, float64)) []AttentionBin {
	var out []AttentionBin
	for i := range n {
		if len(out) == 0 || bits.Len(uint(i)) != bits.Len(uint(out[len(out)-1].From)) {
			out = append(out, AttentionBin{From: i})
		}
		b := &out[len(out)-1]
		e, f := at(i)
		k := float64(i - b.From)
		b.To = i
		b.Entropy = (b.Entropy*k + e) / (k + 1)
		b.Far = (b.Far*k + f) / (k + 1)
		b.Uniform = (b.Uniform*k + math.Log(float64(i+1))) / (k + 1)
	}
	return out
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
