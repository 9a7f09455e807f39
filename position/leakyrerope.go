package position

import (
	"fmt"
	"math"
)

// LeakyReRoPE (Su 2023, "Rectified Rotary Position Embeddings",
// https://kexue.fm/archives/9708; reference code bojone/rerope, leaky_rerope_patch.py) is ReRoPE
// whose distances go on growing past the window w, k times slower: w + (i−j−w)/k for
// i − j ≥ w, the true distance below. leaky_rerope_patch.py scores such a pair with a second
// rotation whose frequencies are divided by k (LlamaLinearScalingRotaryEmbedding with
// scaling_factor k), the query at i + w(k−1) and the key at j, which is AltQuery(i) = w + (i−w)/k
// and AltKey(j) = j/k here, in positions of the model's own frequencies.
//
// The window defaults to L/8, as ReRoPE's (leaky_rerope_patch.py: window = 512 with
// training_length = 4096), and k to 16, leaky_rerope_patch.py's scaling_factor. Its log-n
// scaling of the queries is the logn attention temperature here, as for ReRoPE.
type LeakyReRoPE struct {
	Window int     `yaml:"window"`
	K      float64 `yaml:"k"`
}

func init() { RegisterDistanceMap("leaky_rerope", newLeakyReRoPE) }

func newLeakyReRoPE(s DistanceMapSpec) (DistanceMap, error) {
	p := LeakyReRoPE{Window: max(1, s.TrainLen/8), K: 16}
	if err := s.Config.Decode(&p); err != nil {
		return nil, err
	}
	if err := atLeast("window", p.Window, 1); err != nil {
		return nil, err
	}
	// Below 1 the far keys would grow apart faster than they are, past any trained distance.
	if !(p.K >= 1) || math.IsInf(p.K, 0) {
		return nil, fmt.Errorf("position.distance_map.k: %g, want a number of at least 1", p.K)
	}
	return p, nil
}

// Name is leaky_rerope.
func (LeakyReRoPE) Name() string { return "leaky_rerope" }

// Spans gives the keys j ≤ i − w the slowed distance, and the nearer ones their own.
func (r LeakyReRoPE) Spans(i int, dst []Span) []Span { return nearExact(i, r.Window, dst) }

// AltQuery is w + (i − w)/k: leaky_rerope_patch.py's query position i + w(k−1), divided by k.
func (r LeakyReRoPE) AltQuery(i int) float64 {
	w := float64(r.Window)
	return w + (float64(i)-w)/r.K
}

// AltKey is j/k: the key at j under frequencies divided by k.
func (r LeakyReRoPE) AltKey(j int) float64 { return float64(j) / r.K }
