package passkey

import (
	"context"
	"fmt"
	"io"

	"gorgonia.org/tensor"

	"extrapolate/data"
	"extrapolate/experiments/config"
	"extrapolate/experiments/measure"
	"extrapolate/internal/progress"
	"extrapolate/model"
	"extrapolate/position"
)

// Passkey evaluation: Docs held-out documents at each depth and evaluation length. A cell
// of 32 documents tells 90% from 50% from chance apart, and the whole grid at 1x to 16x of 64
// tokens costs a few seconds.
var Depths = []float64{0, 0.25, 0.5, 0.75, 1}

const Docs = 32

// Cell is passkey retrieval at one evaluation length and needle depth.
type Cell struct {
	Length int `json:"length"`
	// Depth is where the needle sits in the filler: 0 at the start, 1 just before the question.
	Depth      float64 `json:"depth"`
	Applicable bool    `json:"applicable"`
	Reason     string  `json:"reason,omitempty"`
	Docs       int     `json:"docs"`
	Correct    int     `json:"correct"`
	// Accuracy is the share of documents whose five digits the model predicts, greedily, all
	// right.
	Accuracy float64 `json:"accuracy"`
	// Digits is the share of digits predicted right, each given the true digits before it:
	// partial retrieval, which the all-or-nothing accuracy hides (chance 10%).
	Digits float64 `json:"digits"`
}

// evaluate tests retrieval at every evaluation length and depth, on documents of held-out
// keys and validation filler. The answer is read greedily: the model's most likely token at each
// of the five digit positions, given the question and the digits before. With the true digits as
// input (one forward pass), all five are right exactly when greedy decoding would write the key,
// since a causal model's prediction at a position depends only on the tokens before it.
func evaluate(ctx context.Context, m *model.Model, s position.Scheme, ids *measure.WindowIDs, corpus *data.Corpus, e config.Eval, w io.Writer) ([]Cell, error) {
	work := 0
	for _, n := range e.Lengths {
		work += n * len(Depths) * Docs
	}
	p := progress.New(w, work, "passkey")
	defer p.Finish()
	var out []Cell
	for _, n := range e.Lengths {
		cases, err := data.PasskeyCases(corpus.Valid, n, Depths, Docs)
		if err != nil {
			return nil, err
		}
		cells, err := scoreLength(ctx, m, s, ids, n, cases, e.BatchTokens)
		if err != nil {
			return nil, err
		}
		p.Add(n*len(cases), fmt.Sprintf("len %d", n))
		out = append(out, cells...)
	}
	return out, nil
}

// scoreLength scores the cases of one length, a cell per depth in the order the cases give them,
// each at its own draw of window ids.
func scoreLength(ctx context.Context, m *model.Model, s position.Scheme, ids *measure.WindowIDs, n int, cases []data.PasskeyCase, batchTokens int) ([]Cell, error) {
	var cells []Cell
	cell := map[float64]int{} // depth → index in cells
	for _, c := range cases {
		if _, ok := cell[c.Depth]; !ok {
			cell[c.Depth] = len(cells)
			cells = append(cells, Cell{Length: n, Depth: c.Depth, Applicable: true})
		}
		cells[cell[c.Depth]].Docs++
	}
	batch := measure.EvalBatch(len(cases), max(1, batchTokens/n))
	g, err := ids.Graph(m, s, batch, n, model.Options{})
	if model.IsNotApplicable(err) {
		for i := range cells {
			cells[i].Applicable, cells[i].Reason = false, err.Error()
		}
		return cells, nil
	}
	if err != nil {
		return nil, err
	}
	defer g.Close()
	for first := 0; first < len(cases); first += batch {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("%w during passkey evaluation", measure.ErrInterrupted)
		}
		for b, c := range cases[first : first+batch] {
			for t := 0; t < n; t++ {
				g.IDs[b*n+t], g.Targets[b*n+t] = int(c.Doc[t]), int(c.Doc[t+1])
			}
			ids.Draw(g, b, "passkey", n, first+b)
		}
		if _, err := g.Run(); err != nil {
			return nil, err
		}
		for b, c := range cases[first : first+batch] {
			right := digitsRight(g.Logits(), g.Targets, b, n)
			if right == data.PasskeyDigits {
				cells[cell[c.Depth]].Correct++
			}
			cells[cell[c.Depth]].Digits += float64(right)
		}
	}
	for i := range cells {
		cells[i].Accuracy = float64(cells[i].Correct) / float64(cells[i].Docs)
		cells[i].Digits /= float64(cells[i].Docs * data.PasskeyDigits)
	}
	return cells, nil
}

// digitsRight counts how many of the five digits that end the targets of the b-th window of n
// tokens in a batch are its most likely tokens there.
func digitsRight(logits *tensor.Dense, targets []int, b, n int) int {
	right := 0
	for t := n - data.PasskeyDigits; t < n; t++ {
		if model.Argmax(logits, b*n+t) == targets[b*n+t] {
			right++
		}
	}
	return right
}
