package position

// NoPE gives the model no position information beyond the causal mask: it implements none of
// the optional interfaces.
type NoPE struct{}

func init() {
	register("nope", func(s Spec) (Scheme, error) {
		if err := s.Config.Decode(&struct{}{}); err != nil {
			return nil, err
		}
		return NoPE{}, nil
	})
}

// Name is nope.
func (NoPE) Name() string { return "nope" }
