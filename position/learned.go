package position

import "fmt"

// Learned is a trainable table of MaxLen position vectors added to the token embeddings. It has
// no vector for positions at or past MaxLen, so longer sequences are not applicable.
type Learned struct {
	MaxLen, DModel int
}

func init() {
	Register("learned", func(s Spec) (Scheme, error) {
		if err := s.Config.only("max_len"); err != nil {
			return nil, err
		}
		n := s.Config.MaxLen
		if n == 0 {
			n = s.TrainLen
		}
		if n < s.TrainLen {
			return nil, fmt.Errorf("position.max_len: %d is shorter than the training length %d", n, s.TrainLen)
		}
		return Learned{MaxLen: n, DModel: s.DModel}, nil
	})
}

func (l Learned) Embedding(n int) (*Table, error) {
	if n > l.MaxLen {
		return nil, fmt.Errorf("learned positions: %d positions, but the table has %d rows: %w", n, l.MaxLen, ErrNotApplicable)
	}
	return &Table{Rows: l.MaxLen, Cols: l.DModel, Learned: true}, nil
}

func (Learned) Rotation(int) (*Rotation, error) { return nil, nil }
func (Learned) Bias(int) ([][]float64, error)   { return nil, nil }
