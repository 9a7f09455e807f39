package nn

import "time"

// OpTimer, when not nil, is told the wall-clock time of every fused op's forward pass (by the
// op's name, "Linear") and backward pass ("∂Linear"). It is a profiler's hook, for cmd/bench's
// -ops: set it before a graph runs, and not while graphs run on several goroutines at once.
// Left nil, an op pays one comparison for it.
var OpTimer func(op string, d time.Duration)

// opStart is the time an op's pass starts, when it is being timed.
func opStart() time.Time {
	if OpTimer == nil {
		return time.Time{}
	}
	return time.Now()
}

// opDone tells OpTimer how long the pass of op begun at start took.
func opDone(op string, start time.Time) {
	if OpTimer != nil && !start.IsZero() {
		OpTimer(op, time.Since(start))
	}
}
