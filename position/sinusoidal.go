package position

import "math"

// Sinusoidal adds the fixed table of Vaswani et al. (2017) to the token embeddings:
// PE(t, 2i) = sin(t/10000^(2i/d)) and PE(t, 2i+1) = cos(t/10000^(2i/d)), for any length.
type Sinusoidal struct {
	DModel int
}

func init() {
	register("sinusoidal", func(s Spec) (Scheme, error) {
		if err := s.Config.Decode(&struct{}{}); err != nil {
			return nil, err
		}
		return Sinusoidal{DModel: s.DModel}, nil
	})
}

// Name is sinusoidal.
func (Sinusoidal) Name() string { return "sinusoidal" }

// Embedding is the table for n positions.
func (s Sinusoidal) Embedding(n int) (*Table, error) {
	d := s.DModel
	v := make([]float64, n*d)
	for t := 0; t < n; t++ {
		for j := 0; j < d; j++ {
			i := j / 2
			angle := float64(t) / math.Pow(10000, float64(2*i)/float64(d))
			if j%2 == 0 {
				v[t*d+j] = math.Sin(angle)
			} else {
				v[t*d+j] = math.Cos(angle)
			}
		}
	}
	return &Table{Rows: n, Cols: d, Values: v}, nil
}
