package positions

import (
	"math"
	"testing"
)

func TestPositionBuckets(t *testing.T) {
	const n, trainLen = 1024, 64
	pl := Length{Length: n, Applicable: true, sum: make([]float64, n), count: make([]int, n)}
	for p := range n {
		pl.count[p] = 1 + p%3
		pl.sum[p] = float64(p * pl.count[p]) // loss p at position p
	}
	pl.bucket(trainLen)
	next, tokens := 0, 0
	perOctave := map[int]int{}
	for _, b := range pl.Positions {
		if b.From != next || b.To < b.From {
			t.Fatalf("bucket %+v does not start at %d", b, next)
		}
		if b.From < exactSpan*trainLen && b.To != b.From {
			t.Fatalf("bucket %+v groups positions below %d", b, exactSpan*trainLen)
		}
		if b.From >= exactSpan*trainLen {
			perOctave[int(math.Log2(float64(b.From)))]++
		}
		var sum float64
		k := 0
		for p := b.From; p <= b.To; p++ {
			sum += float64(p * pl.count[p])
			k += pl.count[p]
		}
		if b.Tokens != k || math.Abs(b.Loss-sum/float64(k)) > 1e-9 {
			t.Fatalf("bucket %+v, want %d tokens and loss %g", b, k, sum/float64(k))
		}
		next, tokens = b.To+1, tokens+b.Tokens
	}
	if next != n {
		t.Fatalf("buckets end at %d, want %d", next, n)
	}
	for o, k := range perOctave {
		if k > bucketsPerOctave+1 || k < bucketsPerOctave-1 {
			t.Errorf("%d buckets between %d and %d, want about %d", k, 1<<o, 2<<o, bucketsPerOctave)
		}
	}
}
