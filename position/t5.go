package position

import (
	"fmt"
	"math"
)

// T5 adds a learned bias per head to each score, looked up by the bucket of the key's distance
// δ back from the query (Raffel et al., 2020): distances below Buckets/2 have a bucket each, and
// longer ones share log-spaced buckets up to MaxDistance, past which all fall in the last. This
// is T5's relative_position_bucket with bidirectional=False; the table is shared by all layers,
// as in T5.
type T5 struct {
	Heads, Buckets, MaxDistance int
	// Std is the initial spread of the table, d_model^(-1/2) as in T5's initialisation.
	Std float64
}

func init() {
	Register("t5", func(s Spec) (Scheme, error) {
		p := struct {
			Buckets     int `yaml:"buckets"`
			MaxDistance int `yaml:"max_distance"`
		}{Buckets: 32, MaxDistance: 128}
		if err := s.Config.Decode(&p); err != nil {
			return nil, err
		}
		if p.Buckets < 2 || p.Buckets > 1<<12 {
			return nil, fmt.Errorf("position.buckets: %d, want 2 to %d", p.Buckets, 1<<12)
		}
		if p.MaxDistance <= p.Buckets/2 || p.MaxDistance > 1<<24 {
			return nil, fmt.Errorf("position.max_distance: %d, want above buckets/2 = %d and at most %d", p.MaxDistance, p.Buckets/2, 1<<24)
		}
		return T5{Heads: s.Heads, Buckets: p.Buckets, MaxDistance: p.MaxDistance, Std: 1 / math.Sqrt(float64(s.DModel))}, nil
	})
}

// Name is t5.
func (T5) Name() string { return "t5" }

// Bucket is the bucket of a key δ ≥ 0 positions back.
func (t T5) Bucket(δ int) int {
	exact := t.Buckets / 2
	if δ < exact {
		return δ
	}
	// Truncated toward zero, as T5's to(int32) does.
	b := exact + int(math.Log(float64(δ)/float64(exact))/math.Log(float64(t.MaxDistance)/float64(exact))*float64(t.Buckets-exact))
	return min(b, t.Buckets-1)
}

// Weights is the table t5.bias, one row per bucket and a column per head, as T5's Embedding.
func (t T5) Weights() []Weight {
	return []Weight{{Name: "t5.bias", Dims: []int{t.Buckets, t.Heads}, Std: t.Std}}
}

// LearnedBias looks each distance's bucket up in the table; every layer gets the same bias.
func (t T5) LearnedBias(w [][]float64, _, n int) (*Bias, error) {
	b := NewBias(t.Heads, n, false)
	for d := 0; d < n; d++ {
		row := w[0][t.Bucket(d)*t.Heads:]
		for h := 0; h < t.Heads; h++ {
			b.Values[h*n+d] = row[h]
		}
	}
	return b, nil
}

// LearnedBiasGrad adds each distance's gradient to its bucket's.
func (t T5) LearnedBiasGrad(_ [][]float64, _, n int, dBias []float64, dw [][]float64) {
	for d := 0; d < n; d++ {
		row := dw[0][t.Bucket(d)*t.Heads:]
		for h := 0; h < t.Heads; h++ {
			row[h] += dBias[h*n+d]
		}
	}
}

// Describe gives each distance's bucket, for cmd/inspect.
func (t T5) Describe(n int) map[string]any {
	b := make([]int, n)
	for d := range b {
		b[d] = t.Bucket(d)
	}
	return map[string]any{"buckets": b, "num_buckets": t.Buckets, "max_distance": t.MaxDistance}
}
