package nn

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"gorgonia.org/tensor"
)

// BenchmarkSoftpickAttention compares softpick with plain attention (the softmax) on the same
// shapes (float32, four heads of 16 dimensions, scores of unit spread): a training step, forward
// and backward, on 16 sequences of 64 (the committed comparisons' shape) and on 8 of 256, and
// evaluation of one sequence of 4096, across tiles of keys for both. It reports each one's time
// over plain attention's.
func BenchmarkSoftpickAttention(b *testing.B) {
	const heads, hd = 4, 16
	rng := rand.New(rand.NewPCG(5, 7))
	random := func(shape ...int) *tensor.Dense {
		t := newDense(tensor.Float32, shape)
		for i := range Values[float32](t) {
			Values[float32](t)[i] = float32(rng.NormFloat64())
		}
		return t
	}
	for _, c := range []struct {
		batch, n int
		train    bool
	}{{16, 64, true}, {8, 256, true}, {1, 4096, false}} {
		rows := c.batch * c.n
		in := []*tensor.Dense{random(rows, heads*hd), random(rows, heads*hd), random(rows, heads*hd)}
		dout := random(rows, heads*hd)
		mode := "eval"
		if c.train {
			mode = "train"
		}
		plain := AttentionConfig{Batch: c.batch, SeqLen: c.n, Heads: heads}
		softpick := plain
		softpick.Softpick = true
		benchAgainstPlain(b, fmt.Sprintf("%s/%dx%d", mode, c.batch, c.n), "softpick", plain, softpick, c.train, in, dout)
	}
}
