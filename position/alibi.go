package position

import "math"

// ALiBi adds no position vector; each head h adds -Slopes[h]·δ to the score of a key δ positions
// back (Press et al., 2022).
type ALiBi struct {
	Slopes []float64
}

func init() {
	Register("alibi", func(s Spec) (Scheme, error) {
		if err := s.Config.only(); err != nil {
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

func (ALiBi) Embedding(int) (*Table, error)   { return nil, nil }
func (ALiBi) Rotation(int) (*Rotation, error) { return nil, nil }

func (a ALiBi) Bias(n int) ([][]float64, error) {
	b := make([][]float64, len(a.Slopes))
	for h, m := range a.Slopes {
		b[h] = make([]float64, n)
		for d := range b[h] {
			b[h][d] = -m * float64(d)
		}
	}
	return b, nil
}
