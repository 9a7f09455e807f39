package attention_test

import (
	"context"
	"math"
	"math/bits"
	"strings"
	"testing"

	"gorgonia.org/tensor"

	"extrapolate/data"
	"extrapolate/experiments/config"
	"extrapolate/experiments/internal/testrun"
	"extrapolate/experiments/measure"
	"extrapolate/experiments/measure/attention"
	_ "extrapolate/experiments/measure/builtin" // the measures a run takes, in their order
	"extrapolate/experiments/measure/perplexity"
	"extrapolate/model"
	"extrapolate/position"
)

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
		// A fresh model, built as a run builds it before training.
		train, s := rc.Schemes()
		m, err := model.New(rc.ModelConfig(), train, tensor.Float32, rc.Config().Seed)
		if err != nil {
			t.Fatal(err)
		}
		corpus, err := data.Load(c.Data)
		if err != nil {
			t.Fatal(err)
		}
		ev := &measure.Evaluation{Resolved: rc, Model: m, Scheme: s, TrainScheme: s, Corpus: corpus}
		without, err := perplexity.ByLength(context.Background(), ev, s)
		if err != nil {
			t.Fatal(err)
		}
		recs, err := ev.Measure(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		// The perplexity's numbers, as its recorder puts them in the results file.
		res := &measure.Result{TrainLen: c.Train.SeqLen}
		if err := recs[0].Record(t.TempDir(), res); err != nil {
			t.Fatal(err)
		}
		for i, l := range res.Lengths {
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
		checkAttention(t, scheme, s, c, attention.Lengths(recs[len(recs)-1]))
	}
}

// checkAttention compares a run's attention with the softmax of the scheme's bias (zero when
// it has none), query by query, binned in octaves here.
func checkAttention(t *testing.T, scheme string, s position.Scheme, c config.Config, got []attention.Length) {
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
func octaves(n int, at func(i int) (float64, float64)) []attention.Bin {
	var out []attention.Bin
	for i := range n {
		if len(out) == 0 || bits.Len(uint(i)) != bits.Len(uint(out[len(out)-1].From)) {
			out = append(out, attention.Bin{From: i})
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
