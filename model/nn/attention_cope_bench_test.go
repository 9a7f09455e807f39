package nn

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"gorgonia.org/tensor"
)

// BenchmarkCoPEAttention compares attention with contextual positions (CoPE) with plain
// attention on the same shapes (float32, four heads of 16 dimensions): a training step, forward
// and backward, on 16 sequences of 64 with 65 positions (configs/cope.yaml) and on 8 of 256 with
// 257, and evaluation of one sequence of 4096, 64 times the training length of 64, which takes
// the online softmax across tiles of keys. It reports each one's time over plain attention's.
func BenchmarkCoPEAttention(b *testing.B) {
	const heads, hd = 4, 16
	rng := rand.New(rand.NewPCG(5, 6))
	random := func(shape ...int) *tensor.Dense { return randomDense(rng, shape...) }
	for _, c := range []struct {
		name           string
		batch, n, npos int
		train          bool
	}{{"train", 16, 64, 65, true}, {"train", 8, 256, 257, true}, {"eval", 1, 4096, 65, false}} {
		rows := c.batch * c.n
		in := []*tensor.Dense{random(rows, heads*hd), random(rows, heads*hd), random(rows, heads*hd), random(1, hd, c.npos)}
		dout := random(rows, heads*hd)
		plain := AttentionConfig{Batch: c.batch, SeqLen: c.n, Heads: heads}
		cope := plain
		cope.CoPE = true
		benchAgainstPlain(b, fmt.Sprintf("%s/n%d", c.name, c.n), "cope", plain, cope, c.train, in, dout)
	}
}
