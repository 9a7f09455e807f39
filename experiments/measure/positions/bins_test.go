package positions

import (
	"math"
	"reflect"
	"testing"
)

// TestLogBins bins a synthetic loss by position by hand: exact positions 0 to 15, two tokens
// each at loss t, then two buckets over 16..31.
func TestLogBins(t *testing.T) {
	var ps []Bucket
	for p := range 16 {
		ps = append(ps, Bucket{From: p, To: p, Tokens: 2, Loss: float64(p)})
	}
	ps = append(ps, Bucket{From: 16, To: 23, Tokens: 8, Loss: 3}, Bucket{From: 24, To: 31, Tokens: 24, Loss: 7})
	want := []Bucket{
		{From: 0, To: 0, Tokens: 2, Loss: 0},
		{From: 1, To: 1, Tokens: 2, Loss: 1},
		{From: 2, To: 3, Tokens: 4, Loss: 2.5},
		{From: 4, To: 7, Tokens: 8, Loss: 5.5},
		{From: 8, To: 15, Tokens: 16, Loss: 11.5},
		{From: 16, To: 31, Tokens: 32, Loss: (3*8 + 7*24) / 32.0}, // 6
	}
	if got := logBins(ps); !reflect.DeepEqual(got, want) {
		t.Fatalf("bins\n%+v\nwant\n%+v", got, want)
	}
	// A second seed one nat higher everywhere: the bins' mean is half a nat higher, their
	// standard deviation √0.5.
	seed2 := make([]Bucket, len(ps))
	for k, p := range ps {
		p.Loss++
		seed2[k] = p
	}
	mean, std, err := binSeeds([][]Bucket{ps, seed2})
	if err != nil {
		t.Fatal(err)
	}
	for k, b := range mean {
		if b.Loss != want[k].Loss+0.5 || b.Tokens != 2*want[k].Tokens || math.Abs(std[k]-math.Sqrt(0.5)) > 1e-12 {
			t.Errorf("bin %d: %+v ± %g, want loss %g ± √0.5 over %d tokens", k, b, std[k], want[k].Loss+0.5, 2*want[k].Tokens)
		}
	}
}
