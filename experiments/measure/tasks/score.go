package tasks

import (
	"context"
	"fmt"
	"io"
	"math"

	"gorgonia.org/tensor"

	"extrapolate/experiments/measure"
	"extrapolate/internal/progress"
	"extrapolate/model"
	"extrapolate/position"
	"extrapolate/task"
)

// Cell is one task scored at one size.
type Cell struct {
	Task string `json:"task"`
	Size int    `json:"size"`
	// Ratio is the size over the largest training size.
	Ratio float64 `json:"ratio"`
	// Length is the window the size's examples were scored in.
	Length     int    `json:"length"`
	Applicable bool   `json:"applicable"`
	Reason     string `json:"reason,omitempty"`
	Examples   int    `json:"examples"`
	// Exact counts the examples whose every answer byte is the model's most likely token,
	// given the true bytes before it (teacher forcing): exactly those greedy decoding answers
	// right, since a causal model's prediction at a position sees only the bytes before it.
	Exact      int     `json:"exact"`
	ExactMatch float64 `json:"exact_match"`
	// Low and High bound ExactMatch's 95% Wilson interval over the examples.
	Low  float64 `json:"exact_match_low"`
	High float64 `json:"exact_match_high"`
	// Tokens and TokensRight count the answer bytes and those predicted right.
	Tokens        int     `json:"tokens"`
	TokensRight   int     `json:"tokens_right"`
	TokenAccuracy float64 `json:"token_accuracy"`
}

// Score scores the evaluation's tasks with the scheme it is evaluated with, each at its test
// sizes, on the held-out examples every run is scored on: what the measure records of a run,
// and what cmd/eval reports of a task checkpoint under each RoPE scaling.
func Score(ctx context.Context, ev *measure.Evaluation) ([]Cell, error) {
	ids := ev.WindowIDs()
	tasks, examples := ev.Resolved.Tasks()
	return score(ctx, ev.Model, ev.Scheme, ids, tasks, examples, ev.Config().Eval.BatchTokens, ev.Progress)
}

// score scores every task at each of its test sizes, on the held-out examples every run is
// scored on, each at its own draw of window ids.
func score(ctx context.Context, m *model.Model, s position.Scheme, ids *measure.WindowIDs, tasks []task.Task, examples, batchTokens int, w io.Writer) ([]Cell, error) {
	work := 0
	for _, t := range tasks {
		for _, size := range t.Sizes().Test {
			work += task.WindowLen(t, size) * examples
		}
	}
	p := progress.New(w, work, "tasks")
	defer p.Finish()
	var out []Cell
	for _, t := range tasks {
		for _, size := range t.Sizes().Test {
			cases, err := task.Cases(t, size, examples)
			if err != nil {
				return nil, err
			}
			c, err := scoreSize(ctx, m, s, ids, t, size, cases, batchTokens)
			if err != nil {
				return nil, err
			}
			out = append(out, c)
			p.Add(c.Length*examples, fmt.Sprintf("%s %d", t.Name(), size))
		}
	}
	return out, nil
}

// scoreSize scores the examples of one task and size, in windows of the length the size needs.
func scoreSize(ctx context.Context, m *model.Model, s position.Scheme, ids *measure.WindowIDs, t task.Task, size int, cases []task.Example, batchTokens int) (Cell, error) {
	n := task.WindowLen(t, size)
	c := Cell{Task: t.Name(), Size: size, Ratio: float64(size) / float64(t.Sizes().Max), Length: n, Applicable: true, Examples: len(cases)}
	batch := max(1, min(len(cases), batchTokens/n))
	g, err := ids.Graph(m, s, batch, n, model.Options{})
	if model.IsNotApplicable(err) {
		c.Applicable, c.Reason = false, err.Error()
		return c, nil
	}
	if err != nil {
		return c, err
	}
	defer g.Close()
	for first := 0; first < len(cases); first += batch {
		if err := ctx.Err(); err != nil {
			return c, fmt.Errorf("%w during task evaluation", measure.ErrInterrupted)
		}
		k := min(batch, len(cases)-first)
		for b := range batch {
			// Rows past the examples repeat the last one, unscored, to fill the batch.
			e := cases[first+min(b, k-1)]
			if err := task.Fill(g.IDs[b*n:(b+1)*n], g.Targets[b*n:(b+1)*n], t, e); err != nil {
				return c, err
			}
			ids.Draw(g, b, t.Name(), size, first+min(b, k-1))
		}
		if _, err := g.Run(); err != nil {
			return c, err
		}
		for b := range k {
			right, tokens := answerRight(g.Logits(), g.Targets[b*n:(b+1)*n], b*n)
			c.Tokens += tokens
			c.TokensRight += right
			if right == tokens {
				c.Exact++
			}
		}
	}
	c.ExactMatch = float64(c.Exact) / float64(c.Examples)
	c.Low, c.High = Wilson(c.Exact, c.Examples)
	c.TokenAccuracy = float64(c.TokensRight) / float64(c.Tokens)
	return c, nil
}

// answerRight counts a window's targets (those not task.NoTarget) and how many are the most
// likely token of their logits row; the window's rows start at row.
func answerRight(logits *tensor.Dense, targets []int, row int) (right, tokens int) {
	for i, y := range targets {
		if y == task.NoTarget {
			continue
		}
		tokens++
		if model.Argmax(logits, row+i) == y {
			right++
		}
	}
	return right, tokens
}

// Wilson is the 95% Wilson score interval of k successes in n trials (Wilson 1927), which,
// unlike the normal approximation, stays inside [0, 1] and is not empty at 0 or n successes.
func Wilson(k, n int) (low, high float64) {
	if n == 0 {
		return 0, 1
	}
	const z = 1.959963984540054 // the 97.5% quantile of the standard normal
	p, nf := float64(k)/float64(n), float64(n)
	centre := (p + z*z/(2*nf)) / (1 + z*z/nf)
	half := z / (1 + z*z/nf) * math.Sqrt(p*(1-p)/nf+z*z/(4*nf*nf))
	return math.Max(0, centre-half), math.Min(1, centre+half)
}
