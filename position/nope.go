package position

// NoPE gives the model no position information beyond the causal mask.
type NoPE struct{}

func init() {
	Register("nope", func(s Spec) (Scheme, error) {
		if err := s.Config.only(); err != nil {
			return nil, err
		}
		return NoPE{}, nil
	})
}

func (NoPE) Embedding(int) (*Table, error)   { return nil, nil }
func (NoPE) Rotation(int) (*Rotation, error) { return nil, nil }
func (NoPE) Bias(int) ([][]float64, error)   { return nil, nil }
