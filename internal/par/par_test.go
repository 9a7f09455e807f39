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
