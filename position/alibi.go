package position

import "math"

// ALiBi adds no position vector; each head h adds -Slopes[h]·δ to the score of a key δ positions
// back (Press et al., 2022).
type ALiBi struct {
	Slopes []float64
}

func init() {
	register("alibi", func(s Spec) (Scheme, error) {
		if err := s.Config.Decode(&struct{}{}); err != nil {
			return nil, err
		}
		return ALiBi{Slopes: Slopes(s.Heads)}, nil
	})
}

// Slopes returns the heads' slopes: for a power of two n, the geometric sequence starting at
// 2^(-8/n) with that ratio; otherwise those of the largest power of two below n, followed by
// every other slope of twice that power, as in the paper's reference code.
func Slopes(n int) []float64 {
	pow2 := func(n int) []float64 {
		start := math.Pow(2, -8/float64(n))
		s := make([]float64, n)
		for i := range s {
			s[i] = math.Pow(start, float64(i+1))
		}
		return s
	}
	if n&(n-1) == 0 {
		return pow2(n)
	}
	p := 1 << int(math.Floor(math.Log2(float64(n))))
	s := pow2(p)
	for i, v := range Slopes(2 * p) {
		if i%2 == 0 && len(s) < n {
			s = append(s, v)
		}
	}
	return s
}

// Name is alibi.
func (ALiBi) Name() string { return "alibi" }

// Bias is -Slopes[h]·δ for the key δ positions back.
func (a ALiBi) Bias(n int) (*Bias, error) {
	b := NewBias(len(a.Slopes), n, false)
	for h, m := range a.Slopes {
		for d := 0; d < n; d++ {
			b.Values[h*n+d] = -m * float64(d)
		}
	}
	return b, nil
}

// Describe gives the heads' slopes.
func (a ALiBi) Describe(int) map[string]any { return map[string]any{"slopes": a.Slopes} }
