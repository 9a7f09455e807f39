package main

import (
	"math"
	"testing"
)

var logits = []float64{0.5, 2, -1, 2, 1.5, -3, 0}

// TestProbabilities checks the distribution against softmax(logits/T) computed term by term,
// with the bytes outside the top k at zero and ties at the k-th place to the lower index.
func TestProbabilities(t *testing.T) {
	for _, c := range []struct {
		temperature float64
		k           int
		kept        []int
	}{
		{1, 0, []int{0, 1, 2, 3, 4, 5, 6}},
		{0.5, 3, []int{1, 3, 4}},
		{2, 1, []int{1}},
		{1, 2, []int{1, 3}},
		{1, 100, []int{0, 1, 2, 3, 4, 5, 6}},
	} {
		p := probabilities(logits, c.temperature, c.k)
		sum := 0.0
		for _, i := range c.kept {
			sum += math.Exp(logits[i] / c.temperature)
		}
		kept := map[int]bool{}
		for _, i := range c.kept {
			kept[i] = true
		}
		for i, q := range p {
			want := 0.0
			if kept[i] {
				want = math.Exp(logits[i]/c.temperature) / sum
			}
			if math.Abs(q-want) > 1e-12 {
				t.Errorf("T %g, k %d: p[%d] = %g, want %g", c.temperature, c.k, i, q, want)
			}
		}
	}
}

// TestDrawsFollowProbabilities draws many bytes and compares their frequencies with the
// distribution, and checks that none falls outside the top k.
func TestDrawsFollowProbabilities(t *testing.T) {
	s := newSampler(1.5, 4, 42)
	p := probabilities(logits, 1.5, 4)
	const draws = 200000
	count := make([]int, len(logits))
	for range draws {
		count[s.next(logits)]++
	}
	for i, q := range p {
		got := float64(count[i]) / draws
		// Five standard deviations of a binomial frequency.
		if tol := 5 * math.Sqrt(q*(1-q)/draws); math.Abs(got-q) > tol || (q == 0 && count[i] > 0) {
			t.Errorf("byte %d drawn %.4f of the time, p = %.4f", i, got, q)
		}
	}
}

func TestGreedy(t *testing.T) {
	greedy, top1 := newSampler(0, 0, 1), newSampler(1, 1, 1)
	for range 10 {
		if g, k := greedy.next(logits), top1.next(logits); g != 1 || k != 1 {
			t.Fatalf("temperature 0 drew %d, top-k 1 %d; want 1, the first of the two largest", g, k)
		}
	}
}
