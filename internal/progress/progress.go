// Package progress shows how far a long piece of work is (training steps, evaluation batches):
// a bar on a terminal, a plain line every tenth of the way in a log. It is below every package
// of experiments, which all report progress the same way.
package progress

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// Bar shows how far a long piece of work is: a progress bar on a terminal, and a plain
// line every tenth of the way otherwise (CI logs), so that logs stay readable.
type Bar struct {
	bar   *progressbar.ProgressBar
	w     io.Writer
	label string
	total int
	done  int
	next  int
	start time.Time
}

// New shows progress of total units on w, labelled; a nil w shows nothing.
func New(w io.Writer, total int, label string) *Bar {
	p := &Bar{w: w, label: label, total: total, start: time.Now(), next: total / 10}
	if w == nil {
		return p
	}
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		p.bar = progressbar.NewOptions(total,
			progressbar.OptionSetWriter(w),
			progressbar.OptionSetDescription(label),
			progressbar.OptionShowCount(),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionSetElapsedTime(true),
			progressbar.OptionThrottle(200*time.Millisecond),
			progressbar.OptionSetWidth(30),
			progressbar.OptionOnCompletion(func() { fmt.Fprintln(w) }),
		)
	}
	return p
}

// Add advances by n and shows detail (the loss, the speed).
func (p *Bar) Add(n int, detail string) {
	p.done += n
	if p.w == nil {
		return
	}
	if p.bar != nil {
		p.bar.Describe(p.label + " " + detail)
		p.bar.Add(n)
		return
	}
	if p.done >= p.next || p.done == p.total {
		el := time.Since(p.start)
		eta := time.Duration(0)
		if p.done > 0 {
			eta = time.Duration(float64(el) * float64(p.total-p.done) / float64(p.done))
		}
		fmt.Fprintf(p.w, "%s %d/%d %s elapsed %s eta %s\n", p.label, p.done, p.total, detail, el.Round(time.Second), eta.Round(time.Second))
		for p.next <= p.done {
			p.next += max(1, p.total/10)
		}
	}
}

// Skip marks n units as already done (a resumed run), without showing them as work.
func (p *Bar) Skip(n int) {
	p.done += n
	if p.bar != nil {
		p.bar.Set(p.done)
	}
	for p.next <= p.done {
		p.next += max(1, p.total/10)
	}
}

// Finish completes the bar.
func (p *Bar) Finish() {
	if p.bar != nil {
		p.bar.Finish()
	}
}
