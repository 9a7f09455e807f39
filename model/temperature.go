package model

import (
	"fmt"
	"math"
)

// Attention is the config's attention section: a temperature on each query's scores that grows
// with its position, for any position scheme.
//
//   - logn multiplies the scores of the query at position i by max(1, log(i+1)/log(L)), L the
//     training length: Qwen's logn_attn (math.log(i, seq_length) past the training length, 1
//     within it), an inference-time form: the scale is 1 at every position seen in training, so
//     a run trains exactly as without it, and attention stays as sharp over n keys as it was
//     over L.
//   - logn_train multiplies them by log(i+1), in training as at evaluation: the log-length
//     scaled attention of Chiang & Cholak 2022 (logits times log n, n the number of keys the
//     query attends to, here i+1).
//   - ssmax multiplies them by s_h·log(i+1), the log of the number of keys the query sees, with
//     s_h learned per head and layer: Scalable-Softmax (Nakanishi 2025). s_h starts at 1/log(L),
//     so the scale is 1 at the training length.
type Attention struct {
	Scale string `yaml:"scale,omitempty"`
}

func (a Attention) check(trainLen int) error {
	switch a.Scale {
	case "":
	case "logn", "logn_train", "ssmax":
		if trainLen < 2 {
			return fmt.Errorf("attention.scale: %s needs a training length of at least 2, not %d", a.Scale, trainLen)
		}
	default:
		return fmt.Errorf("attention.scale: unknown scale %q (known: logn, logn_train, ssmax)", a.Scale)
	}
	return nil
}

func ssmaxInit(trainLen int) float64 { return 1 / math.Log(float64(trainLen)) }

// lognScale is max(1, log(i+1)/log(L)) for each head and query, (heads, n).
func lognScale(heads, n, trainLen int) []float64 {
	return byQuery(heads, n, func(i int) float64 {
		return math.Max(1, math.Log(float64(i+1))/math.Log(float64(trainLen)))
	})
}

// lognTrainScale is log(i+1) for each head and query, (heads, n).
func lognTrainScale(heads, n int) []float64 {
	return byQuery(heads, n, func(i int) float64 { return math.Log(float64(i + 1)) })
}

// byQuery lays out f(i), the same in every head, as a (heads, n) table.
func byQuery(heads, n int, f func(i int) float64) []float64 {
	v := make([]float64, heads*n)
	for i := 0; i < n; i++ {
		x := f(i)
		for h := 0; h < heads; h++ {
			v[h*n+i] = x
		}
	}
	return v
}

// ssmaxScale computes s_h·log(i+1) from a layer's s, (heads, n).
type ssmaxScale struct{ heads, n int }

func (c ssmaxScale) Forward(in [][]float64, out []float64) error {
	for h, s := range in[0] {
		for i := 0; i < c.n; i++ {
			out[h*c.n+i] = s * math.Log(float64(i+1))
		}
	}
	return nil
}

func (c ssmaxScale) Backward(_ [][]float64, dout []float64, din [][]float64) {
	for h := range din[0] {
		for i := 0; i < c.n; i++ {
			din[0][h] += dout[h*c.n+i] * math.Log(float64(i+1))
		}
	}
}
