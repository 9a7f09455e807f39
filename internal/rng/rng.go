// Package rng is SplitMix64 (Vigna), the generator behind the initial weights and the training
// batches: one 64-bit word of state, so it is saved in a checkpoint as is, and the generator
// PyTorch's reference script (bench/torch_ref.py) uses, so the two can start alike.
package rng

// SplitMix64 is the generator; its zero value is seeded with 0.
type SplitMix64 struct{ State uint64 }

// Next returns the next number.
func (s *SplitMix64) Next() uint64 {
	s.State += 0x9E3779B97F4A7C15
	z := s.State
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	return z ^ (z >> 31)
}

// Float64 returns a number uniform in [0, 1) from the next number's top 53 bits, numpy's
// random_sample in spirit: every float64 of that form is equally likely.
func (s *SplitMix64) Float64() float64 { return float64(s.Next()>>11) / (1 << 53) }
