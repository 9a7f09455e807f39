package position

import (
	"strings"
	"testing"
)

// TestHardALiBi checks Hard-ALiBi's bias against the mask the reference builds
// (sjelassi/transformers_ssm_copy, hard_alibi_model.py, _attn), constructed here as it does:
// for head i < num_masked_heads a mask at the minimum everywhere, then the diagonals
// j = 0..i of the causal (query, key) grid set to 0; heads past num_masked_heads unmasked. A
// key the reference masks must get HardMask, every other 0; and no position vector.
func TestHardALiBi(t *testing.T) {
	const n, heads = 7, 6
	for _, c := range []struct {
		params map[string]any
		masked int
	}{{nil, 3}, {map[string]any{"masked_heads": 6}, 6}, {map[string]any{"masked_heads": 0}, 0}} {
		s, err := New(Spec{DModel: 12, Heads: heads, TrainLen: 8, Config: Config{Scheme: "hard_alibi", Params: c.params}})
		if err != nil {
			t.Fatal(err)
		}
		b, err := s.(Biaser).Bias(n)
		if err != nil {
			t.Fatal(err)
		}
		for h := range heads {
			seen := make([][]bool, n) // seen[q][k], the reference's unmasked entries
			for q := range seen {
				seen[q] = make([]bool, n)
				for k := 0; k <= q; k++ {
					seen[q][k] = h >= c.masked
				}
			}
			if h < c.masked {
				for j := 0; j <= h; j++ { // mask_head[:, range(j, n), range(0, n-j)] = 0
					for q := j; q < n; q++ {
						seen[q][q-j] = true
					}
				}
			}
			for q := range n {
				for k := 0; k <= q; k++ {
					want := 0.0
					if !seen[q][k] {
						want = HardMask
					}
					if got := b.At(h, q, k); got != want {
						t.Fatalf("masked_heads %d: head %d, query %d, key %d: bias %v, want %v", c.masked, h, q, k, got, want)
					}
				}
			}
		}
		if _, ok := s.(Embedder); ok {
			t.Fatal("Hard-ALiBi adds no position embedding")
		}
	}
	for _, bad := range []int{-1, heads + 1} {
		_, err := New(Spec{DModel: 12, Heads: heads, TrainLen: 8, Config: Config{Scheme: "hard_alibi", Params: map[string]any{"masked_heads": bad}}})
		if err == nil || !strings.HasPrefix(err.Error(), "position.masked_heads") {
			t.Errorf("masked_heads %d: %v, want an error naming position.masked_heads", bad, err)
		}
	}
}
