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
//
// How the table is trained follows x-transformers' RelativePositionBias, the reference in PyTorch
// trained with Adam as this trainer is: the bias is Scale times an nn.Embedding table drawn
// N(0, 1), with Scale = √head_dim (x-transformers builds it with scale = dim_head ** 0.5 and adds
// it to the scores after their 1/√head_dim). Under Adam that gives the bias Scale times the
// learning rate of a plain weight. T5 itself (HF's T5Attention, trained with Adafactor) draws the
// table N(0, 1/d_model) and adds it unscaled: `init_std: <d_model^-1/2>` with `scale: 1` is that
// form. The table is not decayed: T5 trains with Adafactor and no weight decay.
type T5 struct {
	Heads, Buckets, MaxDistance int
	// Std is the initial spread of the table, Scale multiplies it into the bias, and LRScale
	// multiplies the table's learning rate.
	Std, Scale, LRScale float64
}

// t5MaxDistance is T5's max_distance, the default; a run trained at fewer tokens caps it at its
// training length (but above buckets/2, where the log-spaced buckets start), so that every bucket is reached in training as every bucket is in T5, trained at 512
// tokens. With 128 at a training length of 64, buckets 27 to 31 (distances of 72 and more) would
// keep their initial values and meet the model first at evaluation.
const t5MaxDistance = 128

func init() {
	register("t5", func(s Spec) (Scheme, error) {
		p := struct {
			Buckets     int     `yaml:"buckets"`
			MaxDistance *int    `yaml:"max_distance"`
			InitStd     float64 `yaml:"init_std"`
			Scale       float64 `yaml:"scale"`
			LRScale     float64 `yaml:"lr_scale"`
		}{Buckets: 32, InitStd: 1, Scale: math.Sqrt(float64(s.HeadDim())), LRScale: 1}
		if err := s.Config.Decode(&p); err != nil {
			return nil, err
		}
		if p.Buckets < 2 || p.Buckets > 1<<12 {
			return nil, fmt.Errorf("position.buckets: %d, want 2 to %d", p.Buckets, 1<<12)
		}
		maxDistance := max(min(t5MaxDistance, s.TrainLen), p.Buckets/2+1)
		if p.MaxDistance != nil {
			maxDistance = *p.MaxDistance
		}
		if maxDistance <= p.Buckets/2 || maxDistance > 1<<24 {
			return nil, fmt.Errorf("position.max_distance: %d, want above buckets/2 = %d and at most %d", maxDistance, p.Buckets/2, 1<<24)
		}
		if err := checkPositive("position.init_std", p.InitStd); err != nil {
			return nil, err
		}
		if err := checkPositive("position.scale", p.Scale); err != nil {
			return nil, err
		}
		if err := checkPositive("position.lr_scale", p.LRScale); err != nil {
			return nil, err
		}
		return T5{Heads: s.Heads, Buckets: p.Buckets, MaxDistance: maxDistance, Std: p.InitStd, Scale: p.Scale, LRScale: p.LRScale}, nil
	})
}

// checkPositive refuses a field that is not a finite number above zero.
func checkPositive(field string, v float64) error {
	if !(v > 0) || v > 1e6 {
		return fmt.Errorf("%s: %g, want above 0 and at most 1e6", field, v)
	}
	return nil
}

// Name is t5.
func (T5) Name() string { return "t5" }

// Sources states the table's settings, and where the defaults come from.
func (t T5) Sources() string {
	return fmt.Sprintf("T5: %d buckets up to max_distance %d, the bias %.3g × a table drawn N(0, %.3g²), learning rate × %g, no weight decay. "+
		"Defaults: T5's 32 buckets and max_distance 128, capped at the training length so that every bucket is trained; "+
		"x-transformers' RelativePositionBias for the scale (√head_dim) and the table (nn.Embedding's N(0, 1)); no decay, as T5 trains with Adafactor without it. References: docs/references.md#t5-relative-bias.",
		t.Buckets, t.MaxDistance, t.Scale, t.Std, t.LRScale)
}

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
	return []Weight{{Name: "t5.bias", Dims: []int{t.Buckets, t.Heads}, Std: t.Std, LRScale: t.LRScale}}
}

// LearnedBias looks each distance's bucket up in the table and scales it; every layer gets the
// same bias.
func (t T5) LearnedBias(w [][]float64, _, n int) (*Bias, error) {
	b := NewBias(t.Heads, n, false)
	for d := 0; d < n; d++ {
		row := w[0][t.Bucket(d)*t.Heads:]
		for h := 0; h < t.Heads; h++ {
			b.Values[h*n+d] = t.Scale * row[h]
		}
	}
	return b, nil
}

// LearnedBiasGrad adds each distance's gradient, scaled, to its bucket's.
func (t T5) LearnedBiasGrad(_ [][]float64, _, n int, dBias []float64, dw [][]float64) {
	for d := 0; d < n; d++ {
		row := dw[0][t.Bucket(d)*t.Heads:]
		for h := 0; h < t.Heads; h++ {
			row[h] += t.Scale * dBias[h*n+d]
		}
	}
}

// Describe gives each distance's bucket, for cmd/inspect.
func (t T5) Describe(n int) map[string]any {
	b := make([]int, n)
	for d := range b {
		b[d] = t.Bucket(d)
	}
	return map[string]any{"buckets": b, "num_buckets": t.Buckets, "max_distance": t.MaxDistance, "scale": t.Scale}
}
