package experiments

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// progress shows how far a long piece of work is: a progress bar on a terminal, and a plain
// line every tenth of the way otherwise (CI logs), so that logs stay readable.
type progress struct {
	bar   *progressbar.ProgressBar
	w     io.Writer
	label string
	total int
	done  int
	next  int
	start time.Time
}

func newProgress(w io.Writer, total int, label string) *progress {
	p := &progress{w: w, label: label, total: total, start: time.Now(), next: total / 10}
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

// add advances by n and shows detail (the loss, the speed).
func (p *progress) add(n int, detail string) {
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

// skip marks n units as already done (a resumed run), without showing them as work.
func (p *progress) skip(n int) {
	p.done += n
	if p.bar != nil {
		p.bar.Set(p.done)
	}
	for p.next <= p.done {
		p.next += max(1, p.total/10)
	}
}

func (p *progress) finish() {
	if p.bar != nil {
		p.bar.Finish()
	}
}
