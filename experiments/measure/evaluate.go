package measure

import (
	"context"
	"extrapolate/experiments/config"
	"extrapolate/internal/progress"
	"fmt"
	"math"
	"runtime/debug"
	"time"

	"gorgonia.org/tensor"

	"extrapolate/data"
	"extrapolate/internal/par"
	"extrapolate/model"
	"extrapolate/position"
)

// strideFor is the distance between the starts of consecutive windows of length n.
func strideFor(e config.Eval, n int) int {
	if e.Stride == nil {
		return n
	}
	return *e.Stride
}

// Measure evaluates a trained model with every measure its config asks for (measuresOf): the
// protocol's pass over the evaluation windows once, shared by every measure that observes it,
// then each measure that evaluates on its own. It returns what each found, to be recorded.
func (ev *Evaluation) Measure(ctx context.Context) ([]Recorder, error) {
	var recs []Recorder
	var obs []PassObserver
	for _, m := range measuresOf(ev.Config()) {
		rec, err := Start(m, ev)
		if err != nil {
			return nil, fmt.Errorf("measure %s: %w", m.Name(), err)
		}
		if rec == nil {
			continue
		}
		recs = append(recs, rec)
		if o, ok := observerOf(rec); ok {
			obs = append(obs, o)
		}
	}
	if len(obs) > 0 {
		if err := ev.Pass(ctx, ev.Scheme, obs...); err != nil {
			return nil, err
		}
	}
	for _, rec := range recs {
		if err := evaluate(ctx, rec); err != nil {
			return nil, err
		}
	}
	return recs, nil
}

// Pass runs the protocol's forward pass with scheme over the evaluation windows of every
// evaluation length, and shows it to the observers. A length the scheme cannot handle by
// design is not applicable, with the reason; a length whose loss is not finite has no numbers,
// NonFinite, with the reason. A run trained at ids drawn at evaluation too sees each window at
// a draw of its own (WindowIDs).
func (ev *Evaluation) Pass(ctx context.Context, scheme position.Scheme, obs ...PassObserver) error {
	e := ev.Config().Eval
	set, err := data.NewEvalSet(ev.Corpus.Valid, e.Tokens)
	if err != nil {
		return err
	}
	ids := ev.WindowIDs()
	plans := make([][]data.Window, len(e.Lengths))
	work := 0
	for i, n := range e.Lengths {
		if plans[i], err = set.Plan(n, strideFor(e, n)); err != nil {
			return err
		}
		work += len(plans[i]) * n
	}
	var opts model.Options
	for _, o := range obs {
		graphOptions(o, &opts)
	}
	p := progress.New(ev.Progress, work, "eval")
	defer p.Finish()
	for i, n := range e.Lengths {
		if i > 0 {
			// The last length's graph is garbage now. Collect it, and give its memory back,
			// before this length's graph is built: otherwise the garbage collector lets the
			// heap grow to hold several lengths' graphs at once. (After the last length, the
			// comparison's runner does the same for the whole run.)
			debug.FreeOSMemory()
		}
		var seen []LengthObserver
		for _, o := range obs {
			if lo := o.Length(n); lo != nil {
				seen = append(seen, lo)
			}
		}
		pl, err := passLength(ctx, ev.Model, scheme, ids, set, n, plans[i], e.BatchTokens, opts, p, seen)
		if err != nil {
			return err
		}
		for _, lo := range seen {
			lo.End(pl)
		}
	}
	return nil
}

// passLength scores the evaluation set in the windows ws of n tokens, each scoring its last
// Score targets, at the window ids ids, and shows every batch to the observers.
func passLength(ctx context.Context, m *model.Model, s position.Scheme, ids *WindowIDs, set *data.EvalSet, n int, ws []data.Window, batchTokens int, opts model.Options, p *progress.Bar, obs []LengthObserver) (PassLength, error) {
	pl := PassLength{LengthResult: LengthResult{Length: n}}
	whole := true // every window scores all its targets: non-overlapping windows
	for _, w := range ws {
		whole = whole && w.Score == n
	}
	// Non-overlapping windows come in batches that divide them, so that the loss is the
	// graph's own mean and the perplexities are those of the protocol before strides existed,
	// bit for bit. Sliding windows fill the last batch up with copies of the last window, whose
	// targets are not scored again.
	batch := min(max(1, batchTokens/n), len(ws))
	if whole {
		batch = EvalBatch(len(ws), batchTokens/n)
	}
	g, err := ids.Graph(m, s, batch, n, opts)
	if model.IsNotApplicable(err) {
		pl.Reason = err.Error()
		if p != nil {
			p.Skip(len(ws) * n)
		}
		return pl, nil
	}
	if err != nil {
		return pl, err
	}
	defer g.Close()
	sc := windowScorer{g: g, ids: ids, set: set, n: n, batch: batch, whole: whole, p: p, obs: obs}
	acc, total, err := sc.score(ctx, ws)
	if err != nil {
		return pl, err
	}
	return scoredLength(pl, acc, total/float64(set.Tokens), set.Tokens), nil
}

// positionAcc sums losses by position in the window.
type positionAcc struct {
	sum   []float64
	count []int
}

func (a *positionAcc) add(t int, loss float64) {
	a.sum[t] += loss
	a.count[t]++
}

// windowScorer runs a length's graph over batches of its windows.
type windowScorer struct {
	g        *model.Graph
	ids      *WindowIDs
	set      *data.EvalSet
	n, batch int  // the graph's window length and windows a batch
	whole    bool // every window scores all its targets, and every batch is full
	p        *progress.Bar
	obs      []LengthObserver
}

// score runs the graph over the windows ws, a batch at a time, and returns the loss of the
// scored targets by position in the window, and in total. It checks that the windows scored
// every token of the evaluation set once.
func (sc *windowScorer) score(ctx context.Context, ws []data.Window) (positionAcc, float64, error) {
	g, n, batch := sc.g, sc.n, sc.batch
	acc := positionAcc{sum: make([]float64, n), count: make([]int, n)}
	rowLoss := make([]float64, batch*n)
	fill := make([]data.Window, batch)
	var total float64
	scored := 0
	start := time.Now()
	for first := 0; first < len(ws); first += batch {
		if err := ctx.Err(); err != nil {
			return acc, 0, fmt.Errorf("%w during evaluation", ErrInterrupted)
		}
		k := copy(fill, ws[first:min(first+batch, len(ws))])
		for i := k; i < batch; i++ {
			fill[i] = ws[len(ws)-1]
		}
		sc.set.FillWindows(g.IDs, g.Targets, n, fill)
		for b, w := range fill {
			sc.ids.Draw(g, b, "text", n, w.Start)
		}
		loss, err := g.Run()
		if err != nil {
			return acc, 0, err
		}
		tokenLosses(g.Logits(), g.Targets, rowLoss)
		for _, o := range sc.obs {
			o.Batch(g, fill[:k], rowLoss)
		}
		var sum float64
		for b, w := range fill[:k] {
			for t := n - w.Score; t < n; t++ {
				acc.add(t, rowLoss[b*n+t])
				sum += rowLoss[b*n+t]
			}
			scored += w.Score
		}
		if sc.whole {
			total += loss * float64(batch*n)
		} else {
			total += sum
		}
		if sc.p != nil {
			sc.p.Add(batch*n, fmt.Sprintf("len %d loss %.3f %.0f tok/s", n, total/float64(scored), float64((first+batch)*n)/time.Since(start).Seconds()))
		}
	}
	if scored != sc.set.Tokens {
		return acc, 0, fmt.Errorf("evaluation at length %d scored %d tokens, want %d", n, scored, sc.set.Tokens)
	}
	return acc, total, nil
}

// scoredLength completes pl, a length scored over tokens with the given mean loss and loss by
// position, with its numbers, or as non-finite, with the reason.
func scoredLength(pl PassLength, acc positionAcc, loss float64, tokens int) PassLength {
	ppl := math.Exp(loss)
	pl.Applicable, pl.Tokens = true, tokens
	if reason := nonFinite(loss, ppl, acc.sum); reason != "" {
		// Recorded as missing, with the reason, as a length the scheme cannot handle is: JSON
		// has no NaN or infinity, and one length must not cost the run its other results. The
		// loss by position of such a length says nothing either.
		pl.NonFinite, pl.Reason = true, reason
		if !math.IsNaN(loss) && !math.IsInf(loss, 0) {
			pl.Loss = &loss
		}
		return pl
	}
	pl.Loss, pl.Perplexity = &loss, &ppl
	pl.Sum, pl.Count = acc.sum, acc.count
	return pl
}

// nonFinite says why a length's loss, perplexity or loss by position is not a finite number
// (a NaN, or an overflow to infinity), or "" when all are finite.
func nonFinite(loss, ppl float64, byPosition []float64) string {
	switch {
	case math.IsNaN(loss) || math.IsInf(loss, 0):
		return fmt.Sprintf("non-finite loss (%v)", loss)
	case math.IsInf(ppl, 0):
		return fmt.Sprintf("non-finite perplexity (%v, from a loss of %.6g)", ppl, loss)
	}
	for t, s := range byPosition {
		if math.IsNaN(s) || math.IsInf(s, 0) {
			return fmt.Sprintf("non-finite loss (%v) at position %d", s, t)
		}
	}
	return ""
}

// EvalBatch is the largest number of windows at most limit that divides windows, so every batch
// is full and one graph serves them all: the protocol's pass and passkey retrieval batch so.
func EvalBatch(windows, limit int) int {
	for b := min(limit, windows); b > 1; b-- {
		if windows%b == 0 {
			return b
		}
	}
	return 1
}

// tokenLosses writes each row's loss, -log softmax(logits[r])[targets[r]], into out, in float64:
// the terms of the graph's mean loss, which a sliding window scores only some of and loss by
// position keeps apart.
func tokenLosses(logits *tensor.Dense, targets []int, out []float64) {
	switch x := logits.Data().(type) {
	case []float32:
		rowLosses(x, targets, out)
	case []float64:
		rowLosses(x, targets, out)
	}
}

func rowLosses[F float32 | float64](logits []F, targets []int, out []float64) {
	v := len(logits) / len(targets)
	// The rows are independent, so the result does not depend on the split.
	par.For(len(targets), 30*v, func(_, lo, hi int) {
		for r := lo; r < hi; r++ {
			row := logits[r*v : (r+1)*v]
			mx := float64(row[0])
			for _, x := range row[1:] {
				mx = math.Max(mx, float64(x))
			}
			var sum float64
			for _, x := range row {
				sum += math.Exp(float64(x) - mx)
			}
			out[r] = mx + math.Log(sum) - float64(row[targets[r]])
		}
	})
}
