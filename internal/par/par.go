// Package par runs the parts of a loop on every core the process may use, on workers that stay
// awake between calls.
//
// A training step is a few hundred products and element-wise passes of tens to hundreds of
// microseconds each, one after another. Starting goroutines for each of them leaves the other
// cores idle for most of the step: a goroutine started on an idle core waits for the scheduler
// to wake a sleeping thread, which on a virtual machine takes about as long as the work (a
// 2048×96×128 product ran no faster on two cores than on one). The workers here spin for a
// short while after each call, as OpenMP's do, and sleep only when no call comes.
//
// Which worker computes which part never changes a result: callers give each output element
// to exactly one part and compute it in a fixed order, so a run gives the same numbers on one
// core as on many.
package par

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// spin is how long an idle worker polls for the next call before it sleeps. A step's calls
// come a few microseconds apart; between steps, and when the process is done, the workers
// sleep and use no CPU.
const spin = 200 * time.Microsecond

// Workers is how many parts a call runs at once: GOMAXPROCS when the program started.
// It is read once, so scratch space sized by it stays valid.
func Workers() int { return workers }

var workers = max(1, runtime.GOMAXPROCS(0))

// Available is how many parts a call made now runs at once: Workers, or 1 while another call
// is running (from inside one of its parts, or from another goroutine), in which case Do runs
// the parts one after another on the caller. A caller that splits its work by Available
// rather than Workers avoids splitting work that would not run in parallel anyway.
func Available() int {
	if workers == 1 || the.busy.Load() {
		return 1
	}
	return workers
}

// Do runs fn(0), …, fn(Workers()-1), each at most once at a time, and returns when all have
// returned. fn(0) runs on the calling goroutine. When the workers are busy with another call,
// Do runs every part on the caller, one after another.
func Do(fn func(w int)) {
	if workers == 1 || !the.busy.CompareAndSwap(false, true) {
		for w := 0; w < workers; w++ {
			fn(w)
		}
		return
	}
	the.start.Do(the.launch)
	the.job = fn
	the.left.Store(int32(workers - 1))
	the.gen.Add(1)
	if the.sleeping.Load() > 0 {
		the.mu.Lock()
		the.wake.Broadcast()
		the.mu.Unlock()
	}
	fn(0)
	for i := 1; the.left.Load() != 0; i++ {
		if i%256 == 0 {
			runtime.Gosched()
		}
	}
	the.job = nil
	the.busy.Store(false)
}

// For splits [0, n) into one contiguous range per worker and runs fn on each, when the work is
// worth it: cost is a rough count of the operations per element, and below about 16k
// operations in all the loop runs on the caller as one range. fn gets its part's index, below
// Workers(), to pick its scratch space.
func For(n, cost int, fn func(w, lo, hi int)) {
	k := min(Available(), n)
	if k <= 1 || n*cost < minWork {
		fn(0, 0, n)
		return
	}
	Do(func(w int) {
		if lo, hi := w*n/k, (w+1)*n/k; w < k && lo < hi {
			fn(w, lo, hi)
		}
	})
}

// minWork is the least work, in rough operations, that For splits: below it the split costs
// more than it saves.
const minWork = 1 << 14

// pool is the workers' shared state. One call runs at a time; gen counts the calls, and a
// worker runs its part of each new generation and then counts itself off in left.
type pool struct {
	busy     atomic.Bool   // a call is running
	gen      atomic.Uint64 // calls so far
	left     atomic.Int32  // workers yet to finish the current call
	job      func(w int)   // the current call's function, set before gen moves
	sleeping atomic.Int32  // workers waiting on wake
	mu       sync.Mutex
	wake     *sync.Cond
	start    sync.Once
}

var the = &pool{}

func (p *pool) launch() {
	p.wake = sync.NewCond(&p.mu)
	for w := 1; w < workers; w++ {
		go p.work(w)
	}
}

func (p *pool) work(w int) {
	var seen uint64
	for {
		seen = p.next(seen)
		p.job(w)
		p.left.Add(-1)
	}
}

// next waits for a generation after seen and returns it: polling for spin, then asleep.
func (p *pool) next(seen uint64) uint64 {
	t0 := time.Now()
	for i := 1; ; i++ {
		if g := p.gen.Load(); g != seen {
			return g
		}
		if i%64 == 0 && time.Since(t0) > spin {
			break
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	// Counted as sleeping before gen is checked again: a call that moves gen after this check
	// sees the count and wakes this worker.
	p.sleeping.Add(1)
	for p.gen.Load() == seen {
		p.wake.Wait()
	}
	p.sleeping.Add(-1)
	return p.gen.Load()
}
