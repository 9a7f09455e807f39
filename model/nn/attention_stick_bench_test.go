package nn

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkStickBreakingAttention compares stick-breaking attention with plain attention
// (benchNormaliser's shapes), where in evaluation of 4096 the plain op takes the online softmax
// across tiles of keys and stick-breaking walks back from each query until its stick is spent.
func BenchmarkStickBreakingAttention(b *testing.B) {
	benchNormaliser(b, rand.New(rand.NewPCG(5, 6)), "stickbreaking", func(c *AttentionConfig) { c.StickBreaking = true })
}
