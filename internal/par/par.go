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

// spin is how long an idle worker polls for the next call before it sleeps, and how long a
// caller polls for its workers before it sleeps between polls. Most of a step's calls come a
// few microseconds apart, but config C's step has about 13 gaps of 0.2–5 ms (gorgonia sums
// the gradients of values used twice on one core), and a worker asleep after one was woken too
// late for the next call, whose caller then did all of it: with 200 µs a step of config C was
// 5–10% slower than with 1 ms, steps of the two settings alternating in blocks of four, on a
// 2-core AMD EPYC (Zen 3). 2 ms was about as fast alone, but two copies at once got 0.96–1.00
// of one copy's aggregate tokens/s (config B) against 1.12 with 1 ms: a longer spin takes more
// of the core another process needs. Between steps, and when the process is done, the
// workers sleep and use no CPU.
const spin = time.Millisecond

// When the process does not get its cores, it runs on one core for a while: the workers sleep,
// Available is 1 and every call runs on its caller, as with GOMAXPROCS=1. The while is
// quietMin, doubled up to quietMax each time the sign comes again within recentQuiet of the
// last quiet's end, as it does while another process keeps the cores busy. Before, the workers
// only stopped spinning for 20 ms and each call woke them, a futex call and a context switch
// on a core another process was using: two copies of config B at once on 2 cores got
// 0.78–0.80 of one copy's aggregate tokens/s, and 1.01–1.02 with the quiet, the two builds
// alternating; with GOMAXPROCS=1 each, 1.98 (a 2-core AMD EPYC, Zen 5; docs/speed.md).
//
// The sign, where Linux reports a thread's run delay (sampleRunDelay), is a worker that found a
// call already done and whose thread waited for a core (runnable, another task on it) at least
// contendedDelay and a quarter of the time since its last such look: another process, or more
// of ours than there are cores. Elsewhere it is a call whose caller finished its own part
// (lateAfter or longer) before a spinning worker claimed one. That late claim alone is no sign
// on a virtual machine whose host takes its cores away for a fraction of a millisecond many
// times a second: on a 2-core AMD EPYC (Zen 4) under KVM it came 40–80 times a second with
// nothing else running, the quiets chained up to quietMax, and config A ran on one core for
// half of each run, 16–18 ms a step against 12–15 with the run delay's sign, which still keeps
// two copies at once on one core each (19–20 ms a step each, 32–40 with no quiet at all).
const (
	quietMin    = 2 * time.Millisecond
	quietMax    = 256 * time.Millisecond
	recentQuiet = 100 * time.Millisecond
)

// lateAfter is how long the caller's own part must have taken for a part still unclaimed to
// mean that the spinning workers are not running: far more than a running one takes to see a
// call (well under a microsecond). It is the sign only where run delays cannot be read.
const lateAfter = 50 * time.Microsecond

// contendedDelay is the least run delay since a worker's last look that counts as a sign, so
// that a short wait behind one of the kernel's threads is not one. On the Zen 4 above, with
// the process alone, 5 looks a second had waited a quarter of the time since the last; with a
// second copy running, about 80.
const contendedDelay = 250 * time.Microsecond

// Workers is how many parts a call runs at once: GOMAXPROCS when the program started.
// It is read once, so scratch space sized by it stays valid.
func Workers() int { return workers }

var workers = max(1, runtime.GOMAXPROCS(0))

// Available is how many parts a call made now runs at once: Workers, or 1 while another call
// is running (from inside one of its parts, or from another goroutine), in which case Do runs
// the parts one after another on the caller. A caller that splits its work by Available
// rather than Workers avoids splitting work that would not run in parallel anyway.
func Available() int {
	if workers == 1 || the.busy.Load() || the.quiet() {
		return 1
	}
	return workers
}

// Do runs fn(0), …, fn(Workers()-1), each exactly once, and returns when all have returned.
// fn(0) runs on the calling goroutine. When the workers are busy with another call, Do runs
// every part on the caller, one after another.
//
// The parts are claimed, not assigned: a part that no worker has claimed when the caller
// finishes its own runs on the caller. On a machine shared with other work a worker may not get
// a core for milliseconds, and waiting for it would leave the caller's core idle too; such a
// call also puts the process on one core for a while (see quietMin), so that its workers do not
// take the cores from the work.
func Do(fn func(w int)) {
	if workers == 1 || the.quiet() || !the.busy.CompareAndSwap(false, true) {
		for w := 0; w < workers; w++ {
			fn(w)
		}
		return
	}
	the.start.Do(the.launch)
	// The order matters to a worker left over from an earlier call: it may claim a part as soon
	// as claim is reset, and must then find this call's job and count.
	the.job = fn
	the.left.Store(int32(workers - 1))
	the.claim.Store(1)
	the.gen.Add(1)
	// Read after gen moves: a worker counts itself asleep before it looks at gen again (next),
	// so one that goes to sleep now either is counted here or sees the new gen.
	spinning := the.sleeping.Load() == 0
	if !spinning {
		the.mu.Lock()
		the.wake.Broadcast()
		the.mu.Unlock()
	}
	t0 := time.Now()
	fn(0)
	own := time.Since(t0)
	if the.runParts() > 0 && spinning && own > lateAfter && !haveRunDelay {
		// A spinning worker that has not claimed a part in all the time the caller took for
		// its own is not getting a core: run on one core for a while. (A part the caller took
		// after a short one of its own says nothing: the worker may just not have looked yet.)
		the.goQuiet()
	}
	the.wait()
	the.job = nil
	the.busy.Store(false)
}

// quiet reports whether the process runs on one core for now (see quietMin).
func (p *pool) quiet() bool { return time.Now().UnixNano() < p.quietUntil.Load() }

// goQuiet runs the process on one core for quietMin, or for twice the last quiet's length if
// that ended within recentQuiet. A sign that comes while the process is quiet (from a worker
// that looked just as another went quiet) changes nothing: it is the same sign.
func (p *pool) goQuiet() {
	p.quietMu.Lock()
	defer p.quietMu.Unlock()
	now, until := time.Now().UnixNano(), p.quietUntil.Load()
	if now < until {
		return
	}
	d := quietMin
	if now-until < int64(recentQuiet) {
		d = min(2*p.quietFor, quietMax)
	}
	p.quietFor = d
	p.quietUntil.Store(now + int64(d))
}

// runParts runs the current call's unclaimed parts and returns how many it ran.
func (p *pool) runParts() int {
	n := 0
	for {
		w := int(p.claim.Add(1)) - 1
		if w >= workers {
			return n
		}
		p.job(w)
		p.left.Add(-1)
		n++
	}
}

// wait returns when every claimed part has finished: polling at first, then sleeping between
// polls, so that a caller whose workers lost their core leaves the core to them.
func (p *pool) wait() {
	t0 := time.Now()
	for i := 1; p.left.Load() != 0; i++ {
		switch {
		case i%64 != 0:
		case time.Since(t0) < spin:
			runtime.Gosched()
		default:
			time.Sleep(spin / 8)
		}
	}
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
// worker that sees a new generation claims parts of it from claim, runs each and counts it off
// in left, until none is left to claim.
type pool struct {
	busy       atomic.Bool   // a call is running
	gen        atomic.Uint64 // calls so far
	claim      atomic.Int32  // the next part of the current call to run
	left       atomic.Int32  // parts 1.. of the current call not yet finished
	job        func(w int)   // the current call's function, set before gen moves
	sleeping   atomic.Int32  // workers waiting on wake
	quietUntil atomic.Int64  // until this time (Unix ns) the process runs on one core
	quietFor   time.Duration // the last quiet's length, under quietMu
	quietMu    sync.Mutex
	sample     func() (delaySample, bool) // sampleRunDelay if nil; in tests, chosen looks
	mu         sync.Mutex
	wake       *sync.Cond
	start      sync.Once
}

var the = &pool{}

func (p *pool) launch() {
	p.wake = sync.NewCond(&p.mu)
	for w := 1; w < workers; w++ {
		go p.work()
	}
}

func (p *pool) work() {
	var seen uint64
	var last delaySample
	for {
		seen = p.next(seen)
		if p.runParts() == 0 && haveRunDelay {
			p.missed(&last)
		}
	}
}

// missed is a worker's look, after it found a call already done, at how long its thread has
// waited for a core since its last look: if long, the process goes quiet.
func (p *pool) missed(last *delaySample) {
	sample := sampleRunDelay
	if p.sample != nil {
		sample = p.sample
	}
	if now, ok := sample(); ok {
		if now.contendedSince(*last) {
			p.goQuiet()
		}
		*last = now
	}
}

// next waits for a generation after seen and returns it: polling for spin, unless the pool is
// quiet, then asleep.
func (p *pool) next(seen uint64) uint64 {
	t0 := time.Now()
	poll := !p.quiet()
	for i := 1; poll; i++ {
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
