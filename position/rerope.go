package position

// ReRoPE, rectified RoPE (Su 2023, "Rectified Rotary Position Embeddings",
// https://kexue.fm/archives/9708; reference code bojone/rerope, rerope_patch.py), keeps the true
// distance of the keys closer than a window w and gives every farther key the distance w:
// min(i−j, w), so that no distance exceeds one seen in training. rerope_patch.py scores a pair
// with i − j ≥ w (outside its rectified_mask) with the query rotated at position w and the key
// not rotated, which is AltQuery(i) = w and AltKey(j) = 0 here.
//
// The window defaults to L/8, L the training length: rerope_patch.py sets window = 512 with
// training_length = 4096 (the README's table also reports w = 1024, L/4). rerope_patch.py also
// scales each query by max(1, log(i+1)/log(L)); that is the logn attention temperature here
// (attention.scale: logn), which a run sets apart, not part of the map.
type ReRoPE struct {
	Window int `yaml:"window"`
}

func init() { RegisterDistanceMap("rerope", newReRoPE) }

func newReRoPE(s DistanceMapSpec) (DistanceMap, error) {
	p := ReRoPE{Window: max(1, s.TrainLen/8)}
	if err := s.Config.Decode(&p); err != nil {
		return nil, err
	}
	if err := atLeast("window", p.Window, 1); err != nil {
		return nil, err
	}
	return p, nil
}

// Name is rerope.
func (ReRoPE) Name() string { return "rerope" }

// Spans gives the keys j ≤ i − w the window's distance, and the nearer ones their own.
func (r ReRoPE) Spans(i int, dst []Span) []Span { return nearExact(i, r.Window, dst) }

// AltQuery is the window: the query rotated at w, as rerope_patch.py's position_ids * 0 + window.
func (r ReRoPE) AltQuery(int) float64 { return float64(r.Window) }

// AltKey is 0: rerope_patch.py scores the far keys unrotated.
func (ReRoPE) AltKey(int) float64 { return 0 }
