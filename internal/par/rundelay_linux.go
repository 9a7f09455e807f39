package par

import (
	"syscall"
	"time"
)

// haveRunDelay reports whether this thread's run delay can be read: Linux with scheduler
// statistics (CONFIG_SCHED_INFO), as distribution kernels have.
var haveRunDelay = func() bool { _, ok := sampleRunDelay(); return ok }()

// sampleRunDelay reads the calling thread's run delay, without allocating: a worker calls it
// each time it finds a call already done.
func sampleRunDelay() (delaySample, bool) {
	tid := syscall.Gettid()
	fd, err := syscall.Open("/proc/thread-self/schedstat", syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return delaySample{}, false
	}
	var buf [96]byte
	n, err := syscall.Read(fd, buf[:])
	syscall.Close(fd)
	if err != nil || n <= 0 {
		return delaySample{}, false
	}
	d, ok := parseSchedstat(buf[:n])
	// The thread is the one read only if it was still the caller's after the read.
	if !ok || syscall.Gettid() != tid {
		return delaySample{}, false
	}
	return delaySample{tid: tid, at: time.Now().UnixNano(), delay: d}, true
}
