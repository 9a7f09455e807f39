package par

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// counts runs Do and returns how often each part ran.
func counts(t *testing.T) []int32 {
	t.Helper()
	got := make([]int32, Workers())
	Do(func(w int) { atomic.AddInt32(&got[w], 1) })
	return got
}

func TestDoRunsEveryPartOnce(t *testing.T) {
	for round := 0; round < 1000; round++ {
		for w, c := range counts(t) {
			if c != 1 {
				t.Fatalf("round %d: part %d ran %d times", round, w, c)
			}
		}
	}
}

// TestDoAfterSleep lets the workers fall asleep between calls, so that they are woken.
func TestDoAfterSleep(t *testing.T) {
	for round := 0; round < 5; round++ {
		time.Sleep(3 * spin)
		for w, c := range counts(t) {
			if c != 1 {
				t.Fatalf("round %d: part %d ran %d times", round, w, c)
			}
		}
	}
}

// TestNested calls Do and For from inside a part, and from many goroutines at once: each call
// still runs each of its parts once.
func TestNested(t *testing.T) {
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for round := 0; round < 200; round++ {
				var outer atomic.Int32
				inner := make([]int32, Workers()*Workers())
				Do(func(w int) {
					outer.Add(1)
					Do(func(v int) { atomic.AddInt32(&inner[w*Workers()+v], 1) })
				})
				if int(outer.Load()) != Workers() {
					t.Errorf("outer parts ran %d times, want %d", outer.Load(), Workers())
					return
				}
				for i, c := range inner {
					if c != 1 {
						t.Errorf("inner part %d ran %d times", i, c)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
}

func TestForCoversRange(t *testing.T) {
	for _, n := range []int{0, 1, 2, 3, 7, 64, 1000, 100003} {
		for _, cost := range []int{1, 1 << 20} {
			seen := make([]int32, n)
			var bad atomic.Bool
			For(n, cost, func(w, lo, hi int) {
				if w < 0 || w >= Workers() || lo < 0 || hi > n || lo >= hi && n > 0 {
					bad.Store(true)
				}
				for i := lo; i < hi; i++ {
					atomic.AddInt32(&seen[i], 1)
				}
			})
			if bad.Load() {
				t.Fatalf("n %d, cost %d: a part out of range", n, cost)
			}
			for i, c := range seen {
				if c != 1 {
					t.Fatalf("n %d, cost %d: element %d done %d times", n, cost, i, c)
				}
			}
		}
	}
}

// BenchmarkDo is the cost of one call with nothing to do: what splitting a loop costs.
func BenchmarkDo(b *testing.B) {
	for i := 0; i < b.N; i++ {
		Do(func(int) {})
	}
}

// TestQuietRunsOnCaller puts the pool in the state a late worker leaves it in, and requires
// each call to run its parts on the caller, in order, and Available to be 1; then, the quiet
// over, Available to be Workers again. Part 0 sleeps, so that a part run by a worker would
// come first.
func TestQuietRunsOnCaller(t *testing.T) {
	if Workers() < 2 {
		t.Skip("one worker: every call runs on the caller anyway")
	}
	defer the.quietUntil.Store(0)
	the.quietUntil.Store(time.Now().Add(time.Hour).UnixNano())
	if n := Available(); n != 1 {
		t.Fatalf("Available() = %d while quiet, want 1", n)
	}
	for round := 0; round < 5; round++ {
		var mu sync.Mutex
		var order []int
		Do(func(w int) {
			if w == 0 {
				time.Sleep(2 * time.Millisecond)
			}
			mu.Lock()
			order = append(order, w)
			mu.Unlock()
		})
		for i, w := range order {
			if w != i {
				t.Fatalf("round %d: parts ran in the order %v while quiet, want 0, 1, … on the caller", round, order)
			}
		}
		if len(order) != Workers() {
			t.Fatalf("round %d: %d parts ran, want %d", round, len(order), Workers())
		}
	}
	the.quietUntil.Store(0)
	if n := Available(); n != Workers() {
		t.Fatalf("Available() = %d after the quiet, want %d", n, Workers())
	}
}

// TestQuietDoubles requires a quiet that follows another within recentQuiet to last twice as
// long, up to quietMax, and one after a longer gap to last quietMin again. It uses a pool of its
// own: the workers of the package's pool may go quiet at any time.
func TestQuietDoubles(t *testing.T) {
	p := &pool{}
	want := quietMin
	for i := 0; i < 10; i++ {
		if i > 0 {
			// The last quiet ended a millisecond ago.
			p.quietUntil.Store(time.Now().Add(-time.Millisecond).UnixNano())
		}
		p.goQuiet()
		if p.quietFor != want {
			t.Fatalf("quiet %d lasts %v, want %v", i, p.quietFor, want)
		}
		if left := time.Until(time.Unix(0, p.quietUntil.Load())); left <= 0 || left > want {
			t.Fatalf("quiet %d ends in %v, want within %v", i, left, want)
		}
		want = min(2*want, quietMax)
	}
	if p.quietFor != quietMax {
		t.Fatalf("after 10 quiets in a row one lasts %v, want quietMax %v", p.quietFor, quietMax)
	}
	p.quietUntil.Store(time.Now().Add(-2 * recentQuiet).UnixNano())
	p.goQuiet()
	if p.quietFor != quietMin {
		t.Fatalf("a quiet %v after the last lasts %v, want quietMin %v", 2*recentQuiet, p.quietFor, quietMin)
	}
}

// TestSignWhileQuiet requires a sign that comes during a quiet to leave it as it is: neither
// doubled (several workers looking at once) nor cut short.
func TestSignWhileQuiet(t *testing.T) {
	p := &pool{}
	p.goQuiet()
	until, length := p.quietUntil.Load(), p.quietFor
	p.goQuiet()
	if p.quietUntil.Load() != until || p.quietFor != length {
		t.Fatalf("a sign while quiet moved the quiet's end by %v and its length from %v to %v", time.Duration(p.quietUntil.Load()-until), length, p.quietFor)
	}
	// A quiet set far ahead (as TestQuietRunsOnCaller sets one) is not cut short either.
	far := time.Now().Add(time.Hour).UnixNano()
	p.quietUntil.Store(far)
	p.goQuiet()
	if p.quietUntil.Load() != far {
		t.Fatalf("a sign cut an hour's quiet to %v", time.Until(time.Unix(0, p.quietUntil.Load())))
	}
}
