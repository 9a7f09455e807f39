package rng

import "testing"

// TestSplitMix64 checks the generator against the reference sequence for seed 0 (Vigna's
// splitmix64.c: 0xe220a8397b1dcdaf, 0x6e789e6aa1b965f4, 0x06c45d188009454f).
func TestSplitMix64(t *testing.T) {
	s := SplitMix64{}
	for _, want := range []uint64{0xe220a8397b1dcdaf, 0x6e789e6aa1b965f4, 0x06c45d188009454f} {
		if got := s.Next(); got != want {
			t.Fatalf("got %#x, want %#x", got, want)
		}
	}
}
