package position

import "fmt"

// StRing is STRING, shifted RoPE (An et al. 2025, "Why Does the Effective Context Length of LLMs
// Fall Short?"; reference code HKUNLP/STRING): distances of S and more, trained too rarely to be
// used well, are overwritten by smaller, well-trained ones, i − j − S + W, while the keys closer
// than S keep their own; W, a small local value, keeps the nearest of the shifted keys from
// landing at distance 0. string_for_llama.py's decoding path scores the keys j < i − S + 1
// with the query rotated at i − S + W (position_ids − diag_size + local_window) and the key at
// j, AltQuery(i) = i − S + W and AltKey(j) = j here, and the last S keys with the true
// positions. (Its prefill path, flash_attn's window_size = [S, 0], counts the key at exactly S
// in both parts; the decoding path's split, followed here, does not.)
//
// shift S defaults to ⌊0.33·L⌋, L the training length: the README's shifted_offset =
// int(0.33 * L), the scripts' shifted_ratio 0.33 (it suggests 0.25 to 0.4). window W defaults
// to L/32, at least 1 and below S: the README's local_value is 128 (it suggests 128 to 512)
// for models of 128K tokens, where 128 would be more than our whole training length; L/32 is
// 128 for a model of 4K, and is this project's choice, not the paper's. string_for_llama.py
// also multiplies cos and sin by 0.1·ln 2 + 1 (its attention_factor, YaRN's at s = 2); that is
// a temperature on the scores, not part of the map, and is not applied.
type StRing struct {
	Shift  int `yaml:"shift"`
	Window int `yaml:"window"`
}

func init() { RegisterDistanceMap("string", newStRing) }

func newStRing(s DistanceMapSpec) (DistanceMap, error) {
	p := StRing{Shift: max(1, int(0.33*float64(s.TrainLen)))}
	if err := s.Config.Decode(&p); err != nil {
		return nil, err
	}
	if err := atLeast("shift", p.Shift, 1); err != nil {
		return nil, err
	}
	if !s.Config.Given("window") {
		p.Window = min(max(1, s.TrainLen/32), p.Shift-1)
	}
	if p.Window < 0 || p.Window >= p.Shift {
		return nil, fmt.Errorf("position.distance_map.window: %d, want at least 0 and below shift %d, so that the shifted distances are shorter than the true ones", p.Window, p.Shift)
	}
	return p, nil
}

// Name is string.
func (StRing) Name() string { return "string" }

// Spans gives the keys j ≤ i − S the shifted distance, and the nearer ones their own.
func (m StRing) Spans(i int, dst []Span) []Span { return nearExact(i, m.Shift, dst) }

// AltQuery is i − S + W: the query moved back by the shift, then forward by the local value.
func (m StRing) AltQuery(i int) float64 { return float64(i - m.Shift + m.Window) }

// AltKey is the key's own position.
func (StRing) AltKey(j int) float64 { return float64(j) }
