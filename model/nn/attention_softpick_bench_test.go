package nn

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkSoftpickAttention compares softpick with plain attention, the softmax
// (benchNormaliser's shapes), both across tiles of keys in evaluation of 4096.
func BenchmarkSoftpickAttention(b *testing.B) {
	benchNormaliser(b, rand.New(rand.NewPCG(5, 7)), "softpick", func(c *AttentionConfig) { c.Softpick = true })
}
