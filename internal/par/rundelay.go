package par

// delaySample is one look at how long the calling thread has waited, runnable, for a core.
type delaySample struct {
	tid   int   // the thread looked at, 0 for none
	at    int64 // when (Unix ns)
	delay int64 // its run delay so far (ns)
}

// contendedSince reports whether the thread waited for a core, between last and s, at least
// contendedDelay and a quarter of the time between them. A look at another thread says nothing.
func (s delaySample) contendedSince(last delaySample) bool {
	if s.tid == 0 || s.tid != last.tid {
		return false
	}
	d := s.delay - last.delay
	return d >= int64(contendedDelay) && 4*d >= s.at-last.at
}

// parseSchedstat returns the run delay, the second of the three numbers in a thread's
// /proc/…/schedstat ("time on a core, time waiting for one, timeslices", in ns).
func parseSchedstat(b []byte) (int64, bool) {
	var v [3]int64
	n, digits := 0, false
	for _, c := range b {
		switch {
		case c >= '0' && c <= '9':
			if n == len(v) {
				return 0, false
			}
			v[n] = v[n]*10 + int64(c-'0')
			digits = true
		case c == ' ' || c == '\n':
			if digits {
				n, digits = n+1, false
			}
		default:
			return 0, false
		}
	}
	if digits {
		n++
	}
	return v[1], n == len(v)
}
