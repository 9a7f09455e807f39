package par

import (
	"testing"
	"time"
)

func TestParseSchedstat(t *testing.T) {
	for _, c := range []struct {
		in    string
		delay int64
		ok    bool
	}{
		{"4001 250000 12\n", 250000, true},
		{"0 0 1\n", 0, true},
		{"98765432101 1234567 890", 1234567, true},
		{"1 2\n", 0, false},        // too few numbers
		{"1 2 3 4\n", 0, false},    // too many
		{"1 -2 3\n", 0, false},     // not a count
		{"", 0, false},             // nothing read
		{"12 3x4 5\n", 0, false},   // not a number
		{"12  34  56\n", 34, true}, // spaces collapse
	} {
		d, ok := parseSchedstat([]byte(c.in))
		if ok != c.ok || ok && d != c.delay {
			t.Errorf("parseSchedstat(%q) = %d, %v; want %d, %v", c.in, d, ok, c.delay, c.ok)
		}
	}
}

// TestContendedSince checks the sign against the rule: at least contendedDelay (250 µs) of run
// delay, and at least a quarter of the time since the last look, on the same thread.
func TestContendedSince(t *testing.T) {
	const us = int64(time.Microsecond)
	last := delaySample{tid: 7, at: 1000 * us, delay: 5000 * us}
	for _, c := range []struct {
		name string
		now  delaySample
		want bool
	}{
		{"300 µs of 1 ms", delaySample{tid: 7, at: 2000 * us, delay: 5300 * us}, true},
		{"250 µs of 1 ms: both at their limits", delaySample{tid: 7, at: 2000 * us, delay: 5250 * us}, true},
		{"249 µs of 0.5 ms: too short a wait", delaySample{tid: 7, at: 1500 * us, delay: 5249 * us}, false},
		{"300 µs of 1.3 ms: under a quarter", delaySample{tid: 7, at: 2300 * us, delay: 5300 * us}, false},
		{"2 ms of 8 ms: a quarter", delaySample{tid: 7, at: 9000 * us, delay: 7000 * us}, true},
		{"another thread", delaySample{tid: 8, at: 2000 * us, delay: 9000 * us}, false},
		{"no thread", delaySample{at: 2000 * us, delay: 9000 * us}, false},
	} {
		if got := c.now.contendedSince(last); got != c.want {
			t.Errorf("%s: contendedSince = %v, want %v", c.name, got, c.want)
		}
	}
	if (delaySample{tid: 7, at: 2000 * us, delay: 9000 * us}).contendedSince(delaySample{}) {
		t.Error("a first look (no last one) counts as a sign")
	}
}

// TestMissedGoesQuiet feeds a worker's looks at its run delay and requires the pool to go quiet
// on the look that shows a wait for a core, and not before.
func TestMissedGoesQuiet(t *testing.T) {
	const ms = int64(time.Millisecond)
	looks := []delaySample{
		{tid: 3, at: 10 * ms, delay: 1 * ms},
		{tid: 3, at: 20 * ms, delay: 1 * ms},  // no wait
		{tid: 4, at: 21 * ms, delay: 30 * ms}, // another thread: no sign, but the next look's base
		{tid: 4, at: 23 * ms, delay: 31 * ms}, // waited 1 ms of 2: a sign
	}
	quietAfter := []bool{false, false, false, true}
	p := &pool{}
	var last delaySample
	for i, l := range looks {
		p.sample = func() (delaySample, bool) { return l, true }
		p.missed(&last)
		if p.quiet() != quietAfter[i] {
			t.Fatalf("after look %d (%+v): quiet %v, want %v", i, l, p.quiet(), quietAfter[i])
		}
		if last != l {
			t.Fatalf("after look %d the last look is %+v, want %+v", i, last, l)
		}
	}
}
