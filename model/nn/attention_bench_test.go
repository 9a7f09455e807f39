package nn

import (
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
