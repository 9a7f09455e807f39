package task

import (
	"bytes"
	"fmt"
	"slices"
	"testing"

	"extrapolate/internal/rng"
)

// The built-in tasks' tests (a file each) share checkBuiltin: the rules every task keeps, over
// many draws at every training and test size, and the task's own check of each example against
// its answer computed from the prompt in a way of the test's own.

// builtinDraws is the examples checkBuiltin draws at each size.
const builtinDraws = 200

// builtinWindow is the most a built-in task's window may be at the top of its training range.
const builtinWindow = 64

// A verifier checks an example of a size: nil if its answer, and which bytes are answer bytes,
// are what the verifier computes from the rest of its text.
type verifier func(size int, e Example) error

// checkBuiltin checks the registered task name with verify.
func checkBuiltin(t *testing.T, name string, verify verifier) {
	t.Helper()
	tk, err := Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	if tk.Name() != name || tk.Source() == "" {
		t.Errorf("name %q, source %q", tk.Name(), tk.Source())
	}
	s := tk.Sizes()
	if err := checkSizes(tk); err != nil {
		t.Fatal(err)
	}
	if w := WindowLen(tk, s.Max); w > builtinWindow {
		t.Errorf("window %d at the top training size %d, want at most %d", w, s.Max, builtinWindow)
	}
	if top := s.Test[len(s.Test)-1]; top < 3*s.Max || top > 4*s.Max || s.Test[0] > s.Max {
		t.Errorf("test sizes %v for training sizes %d to %d, want from inside the range to about 4x", s.Test, s.Min, s.Max)
	}
	var sizes []int
	for n := s.Min; n <= s.Max; n++ {
		sizes = append(sizes, n)
	}
	for _, n := range s.Test {
		if !slices.Contains(sizes, n) {
			sizes = append(sizes, n)
		}
	}
	for _, size := range sizes {
		g := rng.SplitMix64{State: 0x5eed ^ uint64(size)<<20}
		seen := map[string]bool{}
		for range builtinDraws {
			again := g
			e := tk.Generate(&g, size)
			if e2 := tk.Generate(&again, size); !bytes.Equal(e.Text, e2.Text) || !slices.Equal(e.Answer, e2.Answer) || again != g {
				t.Fatalf("size %d: %q and %q from one state", size, e.Text, e2.Text)
			}
			seen[string(e.Text)] = true
			if err := e.check(tk, size); err != nil {
				t.Fatal(err)
			}
			if err := verify(size, e); err != nil {
				t.Fatalf("size %d: %q: %v", size, e.Text, err)
			}
			if bad := corrupt(&g, e); verify(size, bad) == nil {
				t.Fatalf("size %d: the verifier takes %q, a wrong answer to %q", size, bad.Text, e.Text)
			}
		}
		// Plentiful examples at the top of the training range, where they are longest.
		if size == s.Max && len(seen) < builtinDraws*95/100 {
			t.Errorf("size %d: %d distinct examples in %d draws", size, len(seen), builtinDraws)
		}
	}
	for _, size := range s.Test {
		cases, err := Cases(tk, size, 50)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range cases {
			if err := verify(size, e); !HeldOut(e) || err != nil {
				t.Fatalf("size %d: case %q: held out %v, %v", size, e.Text, HeldOut(e), err)
			}
		}
	}
}

// corrupt returns a copy of e with one of its answer bytes, drawn uniformly, changed: a
// verifier must refuse it, or it does not check the answer.
func corrupt(g *rng.SplitMix64, e Example) Example {
	var at []int
	for i, a := range e.Answer {
		if a {
			at = append(at, i)
		}
	}
	bad := Example{Text: slices.Clone(e.Text), Answer: e.Answer}
	i := at[uniform(g, len(at))]
	switch b := bad.Text[i]; {
	case b >= '0' && b <= '9':
		bad.Text[i] = '0' + (b-'0'+1)%10
	case b >= 'a' && b <= 'z':
		bad.Text[i] = 'a' + (b-'a'+1)%26
	default:
		bad.Text[i] = b + 1
	}
	return bad
}

// splitQA splits an example whose answer bytes all follow its prompt into the two.
func splitQA(e Example) (prompt, answer []byte, err error) {
	k := slices.Index(e.Answer, true)
	if k < 0 {
		return nil, nil, fmt.Errorf("no answer")
	}
	if slices.Contains(e.Answer[k:], false) {
		return nil, nil, fmt.Errorf("answer marks %v are not a suffix", e.Answer)
	}
	return e.Text[:k], e.Text[k:], nil
}

// wantAnswer reports an answer that is not want.
func wantAnswer(got []byte, want string) error {
	if string(got) != want {
		return fmt.Errorf("answer %q, want %q", got, want)
	}
	return nil
}
