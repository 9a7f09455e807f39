package position

// LMInfinite (Han et al. 2024, "LM-Infinite: Zero-Shot Extreme Length Generalization for Large
// Language Models"; reference code Glaciohound/LM-Infinite) attends through a Λ-shaped mask, the
// first n_global keys (the starting tokens, whose features differ from the others') and the
// n_local nearest ones, the query's own included, and caps every distance at a limit: min(i−j,
// cap). models/llama.py scores a key past the cap with the key unrotated and the query rotated
// at the cap (its stationary_key_states and stationary_query_states), AltQuery(i) = cap and
// AltKey(j) = 0 here. The paper evaluates ALiBi models too (MPT-7B, models/mpt_7b.py), whose bias
// is then taken at the capped distance: the map applies to bias schemes (MapsBias).
//
// global defaults to 10, the README's drop-in convert_llama_model(model, 4096, 10) (it reports
// 10 to 100 work alike); it counts the starting tokens, a few at any training length, so it is
// not scaled with L. window and cap default to L, the training length: the reference sets
// local_branch and limit_distance both to the pre-training length (4096 for Llama-2,
// convert_llama_model passes local_branch as the limit).
type LMInfinite struct {
	Global int `yaml:"global"`
	Window int `yaml:"window"`
	Cap    int `yaml:"cap"`
}

func init() { RegisterDistanceMap("lm_infinite", newLMInfinite) }

func newLMInfinite(s DistanceMapSpec) (DistanceMap, error) {
	p := LMInfinite{Global: 10, Window: s.TrainLen, Cap: s.TrainLen}
	if err := s.Config.Decode(&p); err != nil {
		return nil, err
	}
	for _, f := range []struct {
		name     string
		v, least int
	}{{"global", p.Global, 0}, {"window", p.Window, 1}, {"cap", p.Cap, 1}} {
		if err := atLeast(f.name, f.v, f.least); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// Name is lm_infinite.
func (LMInfinite) Name() string { return "lm_infinite" }

// Spans gives the starting keys and the window before i, the keys farther than the cap Alt;
// the keys between are masked.
func (m LMInfinite) Spans(i int, dst []Span) []Span {
	local := max(0, i-m.Window+1)
	dst = appendSplit(dst, 0, min(m.Global, local), i-m.Cap)
	return appendSplit(dst, local, i+1, i-m.Cap)
}

// AltQuery is the cap, the query's rotation for the keys past it.
func (m LMInfinite) AltQuery(int) float64 { return float64(m.Cap) }

// AltKey is 0: the keys past the cap are scored unrotated.
func (LMInfinite) AltKey(int) float64 { return 0 }

// MapsBias is true: the paper applies the cap to ALiBi's bias (MPT-7B) too.
func (LMInfinite) MapsBias() bool { return true }

// Masks is true: the Λ mask drops the keys between the starting tokens and the window.
func (LMInfinite) Masks() bool { return true }
