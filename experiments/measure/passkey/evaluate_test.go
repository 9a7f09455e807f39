package passkey

import (
	"testing"

	"gorgonia.org/tensor"
)

// TestDigitsRight checks where the passkey answer is read: the five last positions of a window,
// each predicting the next digit.
func TestDigitsRight(t *testing.T) {
	const n, v = 8, 256
	doc := []byte("ab?12345") // targets of the window: doc shifted by one, then '6'
	targets := make([]int, 2*n)
	for i := range n {
		targets[i] = int(doc[(i+1)%n])
		targets[n+i] = targets[i]
	}
	targets[n-1], targets[2*n-1] = '6', '6'
	logitsFor := func(pred func(r int) int) *tensor.Dense {
		x := make([]float32, 2*n*v)
		for r := range 2 * n {
			x[r*v+pred(r)] = 1
		}
		return tensor.New(tensor.WithShape(2*n, v), tensor.WithBacking(x))
	}
	right := logitsFor(func(r int) int { return targets[r] })
	if digitsRight(right, targets, 0, n) != 5 || digitsRight(right, targets, 1, n) != 5 {
		t.Fatal("the right digits are not counted")
	}
	// Wrong before the answer: does not matter.
	early := logitsFor(func(r int) int {
		if r%n < n-5 {
			return 'z'
		}
		return targets[r]
	})
	if digitsRight(early, targets, 1, n) != 5 {
		t.Fatal("a wrong token before the answer made the answer wrong")
	}
	for _, c := range []struct {
		name  string
		pred  func(int) int
		right int
	}{
		{"one digit off", func(r int) int { return map[bool]int{true: '0', false: targets[r]}[r == n-3] }, 4},
		{"the last digit off", func(r int) int { return map[bool]int{true: 'x', false: targets[r]}[r == n-1] }, 4},
		{"shifted by one", func(r int) int { return targets[max(r-1, 0)] }, 0},
		{"the input, not the next token", func(r int) int { return int(doc[r%n]) }, 0},
	} {
		if got := digitsRight(logitsFor(c.pred), targets, 0, n); got != c.right {
			t.Errorf("%s: %d digits right, want %d", c.name, got, c.right)
		}
	}
}
