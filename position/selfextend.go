package position

import "fmt"

// SelfExtend (Jin et al. 2024, "LLM Maybe LongLM: Self-Extend LLM Context Window Without
// Tuning"; reference code datamllab/LongLM) keeps the true distance of the keys closer than a
// neighbour window W and gives the farther ones grouped positions: the key at ⌊j/G⌋ and the
// query at ⌊i/G⌋ + W − ⌊W/G⌋, shifted so that the grouped distances go on from the window's
// edge. These are legacy_patch_before_4_38/llama_self_extend_patch.py's position_ids_q and
// position_ids_k (g_size_1 = G, g_size_2 = W), and its neighbour mask keeps the true distance
// where i − j < W. (self_extend_patch/Llama.py's prefill shifts by W − W/G unfloored; the two
// agree for the windows this map takes, multiples of G.)
//
// G defaults to 8 and W to L/4, L the training length: self_extend_forward's defaults are
// group_size_1 = 8 and group_size_2 = 1024 for Llama-2's 4096 (llama_example.py uses them too).
// W is taken down to a multiple of G, at least G: with W = mG a key at the window's edge is
// exactly W away, and no grouped distance exceeds the true one; for W not a multiple of G the
// reference's shift would put some keys past their true distance, so such a W is refused.
type SelfExtend struct {
	Group  int `yaml:"group"`
	Window int `yaml:"window"`
}

func init() { RegisterDistanceMap("self_extend", newSelfExtend) }

func newSelfExtend(s DistanceMapSpec) (DistanceMap, error) {
	p := SelfExtend{Group: 8}
	if err := s.Config.Decode(&p); err != nil {
		return nil, err
	}
	if err := atLeast("group", p.Group, 1); err != nil {
		return nil, err
	}
	if !s.Config.Given("window") {
		p.Window = max(p.Group, s.TrainLen/4/p.Group*p.Group)
	}
	if err := atLeast("window", p.Window, 1); err != nil {
		return nil, err
	}
	if p.Window%p.Group != 0 {
		return nil, fmt.Errorf("position.distance_map.window: %d, want a multiple of group %d, so that no grouped distance exceeds the true one", p.Window, p.Group)
	}
	return p, nil
}

// Name is self_extend.
func (SelfExtend) Name() string { return "self_extend" }

// Spans gives the keys j ≤ i − W grouped positions, and the nearer ones their own.
func (e SelfExtend) Spans(i int, dst []Span) []Span { return nearExact(i, e.Window, dst) }

// AltQuery is the query's group, shifted by W − ⌊W/G⌋.
func (e SelfExtend) AltQuery(i int) float64 {
	return float64(i/e.Group + e.Window - e.Window/e.Group)
}

// AltKey is the key's group.
func (e SelfExtend) AltKey(j int) float64 { return float64(j / e.Group) }
