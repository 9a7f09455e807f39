package position

import (
	"math"
	"slices"
	"strings"
	"testing"
)

// pRoPE is RoPE on a head of d dimensions (one head) with frequency_fraction p and scaling sc.
func pRoPE(t *testing.T, d int, p float64, sc *Scaling) *RoPE {
	t.Helper()
	s, err := New(Spec{DModel: d, Heads: 1, TrainLen: 16, Config: Config{Scheme: "rope", Params: map[string]any{"frequency_fraction": p}, Scaling: sc}})
	if err != nil {
		t.Fatal(err)
	}
	return s.(*RoPE)
}

// TestPRoPEGolden checks p-RoPE's frequencies against transformers' proportional RoPE, computed
// by testdata/golden.py: the full head's ladder for its ⌊p·d/2⌋ fastest pairs, 0 for the rest,
// and a linear scaling dividing what turns.
func TestPRoPEGolden(t *testing.T) {
	for _, c := range []struct {
		name string
		d    int
		p    float64
		sc   *Scaling
		want []float64
	}{
		{"d16 p0.75", 16, 0.75, nil, []float64{1, 0.316227766017, 0.1, 0.0316227766017, 0.01, 0.00316227766017, 0, 0}},
		{"d16 p0.3", 16, 0.3, nil, []float64{1, 0.316227766017, 0, 0, 0, 0, 0, 0}},
		{"d32 p0.5 linear 4", 32, 0.5, &Scaling{Type: "linear", Factor: factor(4)}, []float64{0.25, 0.140585331298, 0.0790569415042, 0.044456985251,
			0.025, 0.0140585331298, 0.00790569415042, 0.0044456985251, 0, 0, 0, 0, 0, 0, 0, 0}},
	} {
		f, _ := pRoPE(t, c.d, c.p, c.sc).Frequencies(64)
		near(t, c.name, f, c.want)
		for i, w := range c.want {
			if w == 0 && f[i] != 0 {
				t.Errorf("%s: pair %d turns at %g, want it stopped", c.name, i, f[i])
			}
		}
	}
}

// TestPRoPEStopsSlowPairs checks the property p-RoPE is built for: far past any training
// length, the stopped pairs are not rotated at all (their share of a score is the same at every
// position), while the turning pairs still turn, by the distance only (TestRoPERelative).
func TestPRoPEStopsSlowPairs(t *testing.T) {
	r, err := pRoPE(t, 16, 0.5, nil).Rotation(5000)
	if err != nil {
		t.Fatal(err)
	}
	x := []float64{0.3, -1.2, 0.8, 0.1, -0.5, 0.9, 1.1, -0.2, 0.7, 0.4, -0.6, 1.3, -0.9, 0.2, 0.5, -1.1}
	for _, pos := range []int{0, 1, 777, 4999} {
		y := r.Apply(x, pos)
		// Pairs (i, i+8), half pairing: pairs 4..7 are dimensions 4..7 and 12..15.
		for _, dim := range []int{4, 5, 6, 7, 12, 13, 14, 15} {
			if y[dim] != x[dim] {
				t.Fatalf("position %d: stopped dimension %d became %g, want %g", pos, dim, y[dim], x[dim])
			}
		}
		if pos > 0 && y[0] == x[0] {
			t.Errorf("position %d: the fastest pair did not turn", pos)
		}
	}
}

// TestPRoPEWhole checks that frequency_fraction 1 is plain RoPE to the bit, and that p-RoPE is
// not GPT-NeoX's partial rotation, whose ladder is that of the rotated width.
func TestPRoPEWhole(t *testing.T) {
	plain, _ := rope(t, 16, 10000, 16, nil).Frequencies(64)
	whole, _ := pRoPE(t, 16, 1, nil).Frequencies(64)
	if !slices.Equal(plain, whole) {
		t.Errorf("frequency_fraction 1: %v, plain RoPE %v", whole, plain)
	}
	s, err := New(Spec{DModel: 16, Heads: 1, TrainLen: 16, Config: Config{Scheme: "rope", Params: map[string]any{"rotary_fraction": 0.5}}})
	if err != nil {
		t.Fatal(err)
	}
	neox, _ := s.(*RoPE).Frequencies(64)
	p, _ := pRoPE(t, 16, 0.5, nil).Frequencies(64)
	// Both turn 4 pairs; NeoX's slowest is 10000^(-6/8), p-RoPE's 10000^(-6/16).
	if len(neox) != 4 || math.Abs(neox[3]-math.Pow(10000, -6.0/8)) > 1e-15 || math.Abs(p[3]-math.Pow(10000, -6.0/16)) > 1e-15 {
		t.Errorf("rotary_fraction 0.5: %v; frequency_fraction 0.5: %v", neox, p)
	}
}

func TestPRoPEBadConfigs(t *testing.T) {
	for _, params := range []map[string]any{
		{"frequency_fraction": 0},
		{"frequency_fraction": 1.5},
		{"frequency_fraction": math.NaN()},
		{"frequency_fraction": 0.05}, // ⌊0.05·16/2⌋ = 0 pairs
		{"frequency_fraction": 0.5, "rotary_fraction": 0.5},
	} {
		_, err := New(Spec{DModel: 16, Heads: 1, TrainLen: 16, Config: Config{Scheme: "rope", Params: params}})
		if err == nil || !strings.Contains(err.Error(), "position.frequency_fraction") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%v: error %v, want one line naming position.frequency_fraction", params, err)
		}
	}
}
