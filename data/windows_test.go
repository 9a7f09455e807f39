package data

import (
	"strings"
	"testing"
)

// TestPlanScoresEveryTokenOnce checks the sliding-window protocol from its definition: every
// target of the set is scored exactly once, inside the text, and every target past the first
// window has at least n-stride tokens of context before it in its window.
func TestPlanScoresEveryTokenOnce(t *testing.T) {
	valid := []byte(strings.Repeat("abcdefghijklmnopqrstuvwxyz", 50))
	set, err := NewEvalSet(valid, 1000)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{1, 16, 64, 1000} {
		for _, stride := range []int{1, 3, n / 2, n - 1, n} {
			if stride < 1 || stride > n {
				continue
			}
			ws, err := set.Plan(n, stride)
			if err != nil {
				t.Fatal(err)
			}
			times := make([]int, set.Tokens)
			for k, w := range ws {
				if w.Start < 0 || w.Start+n > set.Tokens || w.Score < 1 || w.Score > n {
					t.Fatalf("n %d stride %d: window %d %+v outside the set", n, stride, k, w)
				}
				for p := n - w.Score; p < n; p++ {
					times[w.Start+p]++ // target index: the token at w.Start+p+1 predicted
					if k > 0 && p < n-stride {
						t.Fatalf("n %d stride %d: window %d scores position %d with %d tokens of context, want at least %d", n, stride, k, p, p, n-stride)
					}
				}
			}
			for i, c := range times {
				if c != 1 {
					t.Fatalf("n %d stride %d: target %d scored %d times", n, stride, i, c)
				}
			}
		}
	}
}

// TestPlanStrideEqualsLength checks that a stride equal to the length gives the non-overlapping
// windows of Fill, token for token.
func TestPlanStrideEqualsLength(t *testing.T) {
	valid := []byte(strings.Repeat("the quick brown fox jumps over the lazy dog. ", 40))
	set, err := NewEvalSet(valid, 1024)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{16, 128, 1024} {
		ws, err := set.Plan(n, n)
		if err != nil {
			t.Fatal(err)
		}
		if len(ws) != set.Windows(n) {
			t.Fatalf("n %d: %d windows, want %d", n, len(ws), set.Windows(n))
		}
		ids, targets := make([]int, len(ws)*n), make([]int, len(ws)*n)
		set.FillWindows(ids, targets, n, ws)
		wantIDs, wantTargets := make([]int, len(ws)*n), make([]int, len(ws)*n)
		set.Fill(wantIDs, wantTargets, n, 0)
		for i := range ids {
			if ids[i] != wantIDs[i] || targets[i] != wantTargets[i] {
				t.Fatalf("n %d: token %d differs from the non-overlapping windows", n, i)
			}
		}
		for _, w := range ws {
			if w.Score != n {
				t.Fatalf("n %d: window %+v does not score all its tokens", n, w)
			}
		}
	}
}

func TestPlanRejectsBadStrides(t *testing.T) {
	set, err := NewEvalSet([]byte(strings.Repeat("x", 200)), 128)
	if err != nil {
		t.Fatal(err)
	}
	for _, stride := range []int{0, -1, 33} {
		if _, err := set.Plan(32, stride); err == nil || !strings.Contains(err.Error(), "eval.stride") {
			t.Errorf("stride %d at length 32: %v, want an error naming eval.stride", stride, err)
		}
	}
	if _, err := set.Plan(256, 1); err == nil {
		t.Error("a window longer than the set was planned")
	}
}

// Windows returns how many windows of length n cover the set; n must divide Tokens. It and
// Fill state the non-overlapping windows plainly, as the protocol had them before strides: the
// reference that Plan and FillWindows are checked against.
func (e *EvalSet) Windows(n int) int { return e.Tokens / n }

// Fill writes windows [first, first+len(ids)/n) of length n into ids and targets.
func (e *EvalSet) Fill(ids, targets []int, n, first int) {
	for b := 0; b < len(ids)/n; b++ {
		off := (first + b) * n
		for t := 0; t < n; t++ {
			ids[b*n+t] = int(e.Valid[off+t])
			targets[b*n+t] = int(e.Valid[off+t+1])
		}
	}
}
