package nn

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gorgonia.org/tensor"
)

// BenchmarkAttentionRemap compares evaluation attention over 4096 keys (float32, four heads of
// 16 dimensions, RoPE) without a mask, with a ReRoPE-like remap (every key beyond a quarter of
// the sequence Alt: one GEMM of Alt scores where the true ones are not needed), with a remap that
// switches between true and Alt keys every 128 (both GEMMs on every tile: the worst case), and
// with a window of a quarter of the sequence. It reports each one's time over plain attention's.
func BenchmarkAttentionRemap(b *testing.B) {
	const n, heads, hd, pairs = 4096, 4, 16, 8
	rng := rand.New(rand.NewPCG(1, 2))
	in := make([]*tensor.Dense, 3)
	for x := range in {
		v := make([]float32, n*heads*hd)
		for i := range v {
			v[i] = float32(rng.NormFloat64())
		}
		in[x] = tensor.New(tensor.WithShape(n, heads*hd), tensor.WithBacking(v))
	}
	table := func(pos func(int) float64) (cos, sin []float64) {
		for t := 0; t < n; t++ {
			for p := 0; p < pairs; p++ {
				a := pos(t) * math.Pow(10000, -2*float64(p)/hd)
				cos, sin = append(cos, math.Cos(a)), append(sin, math.Sin(a))
			}
		}
		return cos, sin
	}
	plain := AttentionConfig{Batch: 1, SeqLen: n, Heads: heads, Positions: Positions{Pairs: pairs}}
	plain.Positions.Cos, plain.Positions.Sin = table(func(t int) float64 { return float64(t) })
	const w = n / 4
	rerope := plain
	rerope.Remap = &Remap{Spans: func(i int, dst []Span) []Span {
		near := max(0, i-w+1)
		return append(dst, Span{From: 0, To: near, Alt: true}, Span{From: near, To: i + 1})
	}}
	rerope.Remap.AltCos, rerope.Remap.AltSin = table(func(int) float64 { return w })
	alternating := rerope
	alternating.Remap = &Remap{AltCos: rerope.Remap.AltCos, AltSin: rerope.Remap.AltSin, Spans: func(i int, dst []Span) []Span {
		for j := 0; j < i-i%128; j += 128 {
			dst = append(dst, Span{From: j, To: j + 128, Alt: j%256 == 0})
		}
		return append(dst, Span{From: i - i%128, To: i + 1})
	}}
	window := plain
	window.Window = w
	var plainNs float64
	for _, c := range []struct {
		name string
		cfg  AttentionConfig
	}{{"plain", plain}, {"rerope", rerope}, {"alternating", alternating}, {"window", window}} {
		b.Run(c.name, func(b *testing.B) {
			k := &attention[float32]{cfg: c.cfg}
			out := newDense(tensor.Float32, tensor.Shape{n, heads * hd})
			if err := k.forward(out, in); err != nil { // sizes the buffers
				b.Fatal(err)
			}
			b.ResetTimer()
			for range b.N {
				if err := k.forward(out, in); err != nil {
					b.Fatal(err)
				}
			}
			ns := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
			if c.name == "plain" {
				plainNs = ns
			} else if plainNs > 0 {
				b.ReportMetric(ns/plainNs, "×plain")
			}
		})
	}
}

// BenchmarkForgetAttention compares attention with forget gates (FoX) with plain attention on
// the same shapes (float32, four heads of 16 dimensions): a training step, forward and backward,
// on 8 sequences of 256, and evaluation of one sequence of 4096, which takes the online softmax
// across tiles of keys. It reports each one's time over plain attention's.
func BenchmarkForgetAttention(b *testing.B) {
	const heads, hd = 4, 16
	rng := rand.New(rand.NewPCG(3, 4))
	random := func(shape ...int) *tensor.Dense { return randomDense(rng, shape...) }
	for _, c := range []struct {
		name     string
		batch, n int
		train    bool
	}{{"train", 8, 256, true}, {"eval", 1, 4096, false}} {
		rows := c.batch * c.n
		in := []*tensor.Dense{random(rows, heads*hd), random(rows, heads*hd), random(rows, heads*hd), random(rows, heads)}
		for i, z := range Values[float32](in[3]) {
			Values[float32](in[3])[i] = float32(logSigmoid(3 + float64(z))) // gates around σ(3)
		}
		dout := random(rows, heads*hd)
		plain := AttentionConfig{Batch: c.batch, SeqLen: c.n, Heads: heads}
		forget := plain
		forget.LogForget = true
		benchAgainstPlain(b, c.name, "forget", plain, forget, c.train, in, dout)
	}
}

// benchAgainstPlain times the attention op with cfg against the same op plain, each a forward
// pass and, in training, a backward pass, as the benchmarks name/plain and name/variant, and
// reports the second's time per step as a multiple of the first's (×plain). in are q, k and v,
// then the inputs cfg adds; the plain op takes the first three.
// randomDense is a float32 tensor of the shape with values of unit spread from rng: a
// benchmark's input.
func randomDense(rng *rand.Rand, shape ...int) *tensor.Dense {
	t := newDense(tensor.Float32, shape)
	for i := range Values[float32](t) {
		Values[float32](t)[i] = float32(rng.NormFloat64())
	}
	return t
}

// benchNormaliser compares attention with a normaliser of its own (set turns plain attention's
// config into it) with plain attention on the same shapes (float32, four heads of 16
// dimensions, scores of unit spread): a training step, forward and backward, on 16 sequences of
// 64 (the committed comparisons' shape) and on 8 of 256, and evaluation of one sequence of 4096.
// It reports each one's time over plain attention's.
func benchNormaliser(b *testing.B, rng *rand.Rand, variant string, set func(*AttentionConfig)) {
	const heads, hd = 4, 16
	for _, c := range []struct {
		batch, n int
		train    bool
	}{{16, 64, true}, {8, 256, true}, {1, 4096, false}} {
		rows := c.batch * c.n
		in := []*tensor.Dense{randomDense(rng, rows, heads*hd), randomDense(rng, rows, heads*hd), randomDense(rng, rows, heads*hd)}
		dout := randomDense(rng, rows, heads*hd)
		mode := "eval"
		if c.train {
			mode = "train"
		}
		plain := AttentionConfig{Batch: c.batch, SeqLen: c.n, Heads: heads}
		cfg := plain
		set(&cfg)
		benchAgainstPlain(b, fmt.Sprintf("%s/%dx%d", mode, c.batch, c.n), variant, plain, cfg, c.train, in, dout)
	}
}

func benchAgainstPlain(b *testing.B, name, variant string, plain, cfg AttentionConfig, train bool, in []*tensor.Dense, dout *tensor.Dense) {
	var plainNs float64
	for i, c := range []AttentionConfig{plain, cfg} {
		label, inputs := name+"/plain", in[:3]
		if i == 1 {
			label, inputs = name+"/"+variant, in
		}
		b.Run(label, func(b *testing.B) {
			k := &attention[float32]{cfg: c, train: train}
			out := newDense(tensor.Float32, in[0].Shape())
			din := make([]*tensor.Dense, len(inputs))
			for i, x := range inputs {
				din[i] = newDense(tensor.Float32, x.Shape())
			}
			step := func() {
				if err := k.forward(out, inputs); err != nil {
					b.Fatal(err)
				}
				if train {
					if err := k.backward(din, dout, out, inputs); err != nil {
						b.Fatal(err)
					}
				}
			}
			step() // sizes the buffers
			b.ResetTimer()
			for range b.N {
				step()
			}
			ns := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
			if i == 0 {
				plainNs = ns
			} else if plainNs > 0 {
				b.ReportMetric(ns/plainNs, "×plain")
			}
		})
	}
}
