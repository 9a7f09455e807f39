package data

import "fmt"

// Window is one evaluation window of the set: it starts at Start in the validation text, and
// its last Score targets are the ones scored (the earlier ones are context only).
type Window struct{ Start, Score int }

// Plan returns the windows of length n that score the set's Tokens targets, each exactly once,
// in order. With stride equal to n they are the non-overlapping windows 0, n, 2n, ...; with a
// smaller stride a window starts every stride tokens and scores only the targets no earlier
// window scored, so that every target past the first window is predicted from at least
// n-stride earlier tokens (the sliding-window protocol of the ALiBi paper's appendix). When the
// windows do not end exactly at Tokens, the last one is moved back to end there and scores
// what is left.
func (e *EvalSet) Plan(n, stride int) ([]Window, error) {
	switch {
	case n <= 0 || n > e.Tokens:
		return nil, fmt.Errorf("eval.lengths: %d, want a length between 1 and eval.tokens %d", n, e.Tokens)
	case stride <= 0 || stride > n:
		return nil, fmt.Errorf("eval.stride: %d, want a stride between 1 and the length %d", stride, n)
	}
	ws := []Window{{Start: 0, Score: n}}
	for covered := n; covered < e.Tokens; {
		start := min(covered+stride-n, e.Tokens-n)
		ws = append(ws, Window{Start: start, Score: start + n - covered})
		covered = start + n
	}
	return ws, nil
}

// FillWindows writes the windows ws, each of length n, into ids and targets, one after
// another.
func (e *EvalSet) FillWindows(ids, targets []int, n int, ws []Window) {
	for b, w := range ws {
		for t := 0; t < n; t++ {
			ids[b*n+t] = int(e.Valid[w.Start+t])
			targets[b*n+t] = int(e.Valid[w.Start+t+1])
		}
	}
}
