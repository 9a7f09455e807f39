package nn

import (
	"math"
	"math/rand/v2"
	"testing"
)

// softmaxBackwardRef is attention's backward pass through the softmax one row at a time, as it
// was before its rows' sums ran in pairs: the bits softmaxBackward must give.
func softmaxBackwardRef(k *attention[float32], task, h int, pt, ds, qscale []float32, scale float32) {
	t := k.cfg.SeqLen
	for i := 0; i < t; i++ {
		pr, dr := pt[i*t:i*t+i+1], ds[i*t:(i+1)*t]
		var dot float64
		for j, p := range pr {
			dot += float64(p) * float64(dr[j])
		}
		rowScale := scale
		if qscale != nil {
			rowScale = qscale[h*t+i] * scale
		}
		var sg float64
		for j, p := range pr {
			g := float32(float64(p) * (float64(dr[j]) - dot))
			if k.cfg.LearnBias {
				pr[j] = g
			}
			if k.raw != nil {
				sg += float64(g) * float64(k.raw[(task*t+i)*t+j])
			}
			dr[j] = g * rowScale
		}
		if k.raw != nil {
			k.scaleGrad[task*t+i] = sg
		}
		clear(dr[i+1:])
	}
}

// TestSoftmaxBackwardIsRowByRow requires softmaxBackward to give the row-at-a-time reference's
// bits in ds, in a learned bias's gradient (which replaces p) and in a learned query scale's sums,
// for even and odd lengths.
func TestSoftmaxBackwardIsRowByRow(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	for _, n := range []int{1, 2, 3, 8, 17, 64} {
		for _, c := range []struct{ learnBias, raw bool }{{false, false}, {true, false}, {false, true}, {true, true}} {
			const tasks, heads = 3, 2
			vals := func(k int) []float32 {
				v := make([]float32, k)
				for i := range v {
					v[i] = float32(rng.NormFloat64())
				}
				return v
			}
			var qscale []float32
			mk := func() *attention[float32] {
				k := &attention[float32]{cfg: AttentionConfig{SeqLen: n, Heads: heads, LearnBias: c.learnBias}}
				if c.raw {
					k.raw, k.scaleGrad = vals(tasks*n*n), make([]float64, tasks*n)
				}
				return k
			}
			if c.raw {
				qscale = vals(heads * n)
			}
			got, want := mk(), mk()
			copy(want.raw, got.raw)
			for task := 0; task < tasks; task++ {
				pt, ds := vals(n*n), vals(n*n)
				pw, dw := append([]float32(nil), pt...), append([]float32(nil), ds...)
				got.softmaxBackward(task, task%heads, pt, ds, qscale, 0.3, nil)
				softmaxBackwardRef(want, task, task%heads, pw, dw, qscale, 0.3)
				for i := range ds {
					if math.Float32bits(ds[i]) != math.Float32bits(dw[i]) || math.Float32bits(pt[i]) != math.Float32bits(pw[i]) {
						t.Fatalf("n %d, %+v, task %d, [%d]: ds %g p %g, the reference's %g, %g", n, c, task, i, ds[i], pt[i], dw[i], pw[i])
					}
				}
			}
			for i, g := range got.scaleGrad {
				if math.Float64bits(g) != math.Float64bits(want.scaleGrad[i]) {
					t.Fatalf("n %d: scale gradient [%d] %g, the reference's %g", n, i, g, want.scaleGrad[i])
				}
			}
		}
	}
}

// TestSoftmaxPairIsPrefix requires softmaxPair to give softmaxPrefix's bits for both of its
// rows, in float32 and float64, for lengths on either side of the vector exponential's eight,
// with scores of every size and the future keys zeroed.
func TestSoftmaxPairIsPrefix(t *testing.T) {
	testSoftmaxPair[float32](t)
	testSoftmaxPair[float64](t)
}

func testSoftmaxPair[F float](t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	for n := 1; n <= 40; n++ {
		const width = 48
		a, b := make([]F, width), make([]F, width)
		for i := range a {
			a[i] = F(rng.NormFloat64() * float64(1+rng.IntN(30)))
			b[i] = F(rng.NormFloat64() * float64(1+rng.IntN(30)))
		}
		wa, wb := append([]F(nil), a...), append([]F(nil), b...)
		softmaxPrefix(wa, n)
		softmaxPrefix(wb, n+1)
		softmaxPair(a, b, n)
		for i := range a {
			if bits(a[i]) != bits(wa[i]) || bits(b[i]) != bits(wb[i]) {
				t.Fatalf("%T, n %d, key %d: pair %g, %g; prefix %g, %g", a[0], n, i, a[i], b[i], wa[i], wb[i])
			}
		}
	}
}

// bits is x's bits, through float64, which holds every float32 exactly.
func bits[F float](x F) uint64 { return math.Float64bits(float64(x)) }
