package main

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"extrapolate/model/nn"
)

// opTimes adds up, over the timed steps, the wall-clock time of each fused op's forward and
// backward pass (nn.OpTimer), of the optimizer's update and of filling the batch: where a step's
// time goes. What is left of the step is gorgonia's own: its tape machine and any stock op.
type opTimes map[string]time.Duration

// The parts of a step that are not ops.
const (
	opsBatch = "(batch)"
	opsAdamW = "(AdamW update)"
	opsRest  = "(graph and the rest)"
)

// start times every op from now on, into t.
func (t opTimes) start() {
	nn.OpTimer = func(op string, d time.Duration) { t[op] += d }
}

// stop stops timing ops.
func (t opTimes) stop() {
	if t != nil {
		nn.OpTimer = nil
	}
}

// add adds the time since start to part, in a timed step when the parts are timed.
func (t opTimes) add(timed bool, part string, start time.Time) {
	if t != nil && timed {
		t[part] += time.Since(start)
	}
}

// perStep is each part's ms a step over steps timed steps that took total, with the rest of the
// step as opsRest.
func (t opTimes) perStep(steps int, total time.Duration) map[string]float64 {
	out := make(map[string]float64, len(t)+1)
	rest := total
	for op, d := range t {
		out[op] = d.Seconds() * 1e3 / float64(steps)
		rest -= d
	}
	out[opsRest] = rest.Seconds() * 1e3 / float64(steps)
	return out
}

// writeOps prints the parts of a step, the slowest first, with their share of the step.
func writeOps(w io.Writer, ms map[string]float64) {
	var step float64
	for _, v := range ms {
		step += v
	}
	names := slices.Collect(maps.Keys(ms))
	slices.SortFunc(names, func(a, b string) int { return cmp.Or(cmp.Compare(ms[b], ms[a]), strings.Compare(a, b)) })
	fmt.Fprintf(w, "%-24s %10s %7s\n", "part of a step", "ms a step", "share")
	for _, n := range names {
		fmt.Fprintf(w, "%-24s %10.2f %6.1f%%\n", n, ms[n], 100*ms[n]/step)
	}
	fmt.Fprintf(w, "%-24s %10.2f\n", "step (mean)", step)
}
