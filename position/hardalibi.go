package position

import "fmt"

// HardALiBi is Hard-ALiBi (Jelassi et al. 2024, "Repeat After Me: Transformers are Better than
// State Space Models at Copying", arXiv 2402.01032): no position vector, and a hard window on
// the first MaskedHeads heads, head h seeing only the h+1 latest keys, its own included; the
// other heads see every key with no position information, as NoPE. The reference
// (sjelassi/transformers_ssm_copy, synthetic_exps/models/hard_alibi_model.py, _attn) unmasks,
// for head i < num_masked_heads, the diagonals 0..i of a mask at the dtype's minimum and adds it
// to the scores; its command line takes num_masked_heads 8 of 16 heads by default, so half the
// heads here.
type HardALiBi struct {
	Heads       int
	MaskedHeads int
}

// HardMask is the bias of a key a Hard-ALiBi head does not see: finite, as GPT-NeoX's
// masked_bias (−1e9) is, so that a tile of keys none of which a query sees leaves the online
// softmax's running maximum finite; e^(−1e9) is 0 in float32 and float64 alike.
const HardMask = -1e9

func init() {
	register("hard_alibi", func(s Spec) (Scheme, error) {
		p := struct {
			MaskedHeads *int `yaml:"masked_heads"`
		}{}
		if err := s.Config.Decode(&p); err != nil {
			return nil, err
		}
		masked := s.Heads / 2
		if p.MaskedHeads != nil {
			masked = *p.MaskedHeads
		}
		if masked < 0 || masked > s.Heads {
			return nil, fmt.Errorf("position.masked_heads: %d, want 0 to the model's %d heads", masked, s.Heads)
		}
		return HardALiBi{Heads: s.Heads, MaskedHeads: masked}, nil
	})
}

// Name is hard_alibi.
func (HardALiBi) Name() string { return "hard_alibi" }

// Window is the number of keys head h sees, its own included; 0 for every key.
func (a HardALiBi) Window(h int) int {
	if h < a.MaskedHeads {
		return h + 1
	}
	return 0
}

// Bias is 0 for the keys head h sees and HardMask for the others.
func (a HardALiBi) Bias(n int) (*Bias, error) {
	b := NewBias(a.Heads, n, false)
	for h := range a.Heads {
		if w := a.Window(h); w > 0 {
			for d := w; d < n; d++ {
				b.Values[h*n+d] = HardMask
			}
		}
	}
	return b, nil
}

// Describe gives each head's window, 0 for every key.
func (a HardALiBi) Describe(int) map[string]any {
	w := make([]int, a.Heads)
	for h := range w {
		w[h] = a.Window(h)
	}
	return map[string]any{"masked_heads": a.MaskedHeads, "windows": w}
}
