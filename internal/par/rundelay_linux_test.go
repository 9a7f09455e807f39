package par

import (
	"runtime"
	"syscall"
	"testing"
	"time"
)

// TestSampleRunDelay reads the run delay of a thread twice: the same thread, later, and a delay
// that has not gone down.
func TestSampleRunDelay(t *testing.T) {
	if !haveRunDelay {
		t.Skip("no /proc/thread-self/schedstat: the kernel keeps no run delays")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	a, ok := sampleRunDelay()
	if !ok {
		t.Fatal("sampleRunDelay failed where haveRunDelay is set")
	}
	for t0 := time.Now(); time.Since(t0) < 5*time.Millisecond; {
	}
	b, ok := sampleRunDelay()
	if !ok {
		t.Fatal("sampleRunDelay failed the second time")
	}
	if tid := syscall.Gettid(); a.tid != tid || b.tid != tid {
		t.Fatalf("samples of threads %d and %d, want the locked thread %d", a.tid, b.tid, tid)
	}
	if b.at <= a.at || b.delay < a.delay {
		t.Fatalf("second sample %+v is not after the first %+v", b, a)
	}
}
