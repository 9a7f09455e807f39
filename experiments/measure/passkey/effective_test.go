package passkey

import "testing"

// cellsOf is a run's cells at 64 to 1024 (given longest first, to show the order does not
// matter), every depth at the length's accuracy.
func cellsOf(acc ...float64) []Cell {
	var out []Cell
	for i := len(acc) - 1; i >= 0; i-- {
		for _, d := range Depths {
			out = append(out, Cell{Length: 64 << i, Depth: d, Applicable: true, Docs: Docs, Accuracy: acc[i]})
		}
	}
	return out
}

// TestEffective checks the effective length by retrieval on both sides of its share of the 1x
// and of its floor.
func TestEffective(t *testing.T) {
	for _, c := range []struct {
		name string
		acc  []float64
		want int
	}{
		{"plain RoPE", []float64{1, 0, 0, 0, 0}, 64},
		{"Self-Extend", []float64{0.998, 0.99, 0.975, 0.49, 0}, 256},
		{"at the share", []float64{1, 0.9, 0.9, 0.89, 0.95}, 256}, // 0.89 < 0.9 stops it; 1024 does not count
		{"above the share, below the floor", []float64{0.55, 0.5, 0.49, 0.49, 0.49}, 128},
		{"not retrieving at 1x", []float64{0.45, 0.45, 0.45, 0.45, 0.45}, 0},
	} {
		if got := Effective(cellsOf(c.acc...), 64); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}
}
