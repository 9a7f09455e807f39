package measure

import (
	"bytes"
	"context"
	"encoding/csv"
	"extrapolate/experiments/config"
	"extrapolate/internal/progress"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"gorgonia.org/tensor"

	"extrapolate/data"
	"extrapolate/experiments/plot"
	"extrapolate/model"
	"extrapolate/position"
)

// Files of passkey retrieval, in a run folder and in a comparison folder.
const (
	PasskeyCSV  = "passkey.csv"
	PasskeyJSON = "passkey.json"
	PasskeyPNG  = "passkey.png"
	PasskeySVG  = "passkey.svg"
)

// Passkey evaluation: PasskeyDocs held-out documents at each depth and evaluation length. A cell
// of 32 documents tells 90% from 50% from chance apart, and the whole grid at 1x to 16x of 64
// tokens costs a few seconds.
var PasskeyDepths = []float64{0, 0.25, 0.5, 0.75, 1}

const PasskeyDocs = 32

// PasskeyResult is passkey retrieval at one evaluation length and needle depth.
type PasskeyResult struct {
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

// evaluatePasskey tests retrieval at every evaluation length and depth, on documents of held-out
// keys and validation filler. The answer is read greedily: the model's most likely token at each
// of the five digit positions, given the question and the digits before. With the true digits as
// input (one forward pass), all five are right exactly when greedy decoding would write the key,
// since a causal model's prediction at a position depends only on the tokens before it.
func evaluatePasskey(ctx context.Context, m *model.Model, s position.Scheme, corpus *data.Corpus, e config.Eval, w io.Writer) ([]PasskeyResult, error) {
	work := 0
	for _, n := range e.Lengths {
		work += n * len(PasskeyDepths) * PasskeyDocs
	}
	p := progress.New(w, work, "passkey")
	defer p.Finish()
	var out []PasskeyResult
	for _, n := range e.Lengths {
		cases, err := data.PasskeyCases(corpus.Valid, n, PasskeyDepths, PasskeyDocs)
		if err != nil {
			return nil, err
		}
		cells, err := passkeyAt(ctx, m, s, n, cases, e.BatchTokens)
		if err != nil {
			return nil, err
		}
		p.Add(n*len(cases), fmt.Sprintf("len %d", n))
		out = append(out, cells...)
	}
	return out, nil
}

// passkeyAt scores the cases of one length, a cell per depth in the order the cases give them.
func passkeyAt(ctx context.Context, m *model.Model, s position.Scheme, n int, cases []data.PasskeyCase, batchTokens int) ([]PasskeyResult, error) {
	var cells []PasskeyResult
	cell := map[float64]int{} // depth → index in cells
	for _, c := range cases {
		if _, ok := cell[c.Depth]; !ok {
			cell[c.Depth] = len(cells)
			cells = append(cells, PasskeyResult{Length: n, Depth: c.Depth, Applicable: true})
		}
		cells[cell[c.Depth]].Docs++
	}
	batch := EvalBatch(len(cases), max(1, batchTokens/n))
	g, err := m.Graph(s, batch, n, model.Options{})
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
			return nil, fmt.Errorf("%w during passkey evaluation", ErrInterrupted)
		}
		for b, c := range cases[first : first+batch] {
			for t := 0; t < n; t++ {
				g.IDs[b*n+t], g.Targets[b*n+t] = int(c.Doc[t]), int(c.Doc[t+1])
			}
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

// passkeyFile is a run's passkey.json.
type passkeyFile struct {
	Name     string          `json:"name"`
	Scheme   string          `json:"scheme"`
	Scaling  string          `json:"scaling,omitempty"`
	Seed     uint64          `json:"seed"`
	TrainLen int             `json:"train_len"`
	Chance   float64         `json:"chance"`
	Cells    []PasskeyResult `json:"cells"`
}

// writePasskey writes a run's passkey retrieval as CSV, JSON and a heat map.
func writePasskey(dir string, res *Result, cells []PasskeyResult) error {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.Write([]string{"length", "ratio", "depth", "docs", "correct", "accuracy", "digits_right", "applicable", "reason", "chance"})
	for _, c := range cells {
		w.Write([]string{strconv.Itoa(c.Length), CSVFloat(float64(c.Length) / float64(res.TrainLen)), CSVFloat(c.Depth), strconv.Itoa(c.Docs),
			strconv.Itoa(c.Correct), CSVFloat(c.Accuracy), CSVFloat(c.Digits), strconv.FormatBool(c.Applicable), c.Reason, CSVFloat(data.PasskeyChance)})
	}
	w.Flush()
	if err := WriteFile(filepath.Join(dir, PasskeyCSV), b.Bytes()); err != nil {
		return err
	}
	f := passkeyFile{Name: res.Name, Scheme: res.Scheme, Scaling: res.Scaling, Seed: res.Seed, TrainLen: res.TrainLen, Chance: data.PasskeyChance, Cells: cells}
	if err := WriteJSON(filepath.Join(dir, PasskeyJSON), f); err != nil {
		return err
	}
	title := fmt.Sprintf("%s: passkey retrieval (chance %s)", res.Name, Percent(data.PasskeyChance))
	return passkeyGrid(cells).draw(filepath.Join(dir, PasskeyPNG), filepath.Join(dir, PasskeySVG), title, res.TrainLen)
}

// passkeyTable is a run's retrieval as text: a row per depth, a column per length.
func passkeyTable(cells []PasskeyResult, trainLen int) string {
	g := passkeyGrid(cells)
	var b strings.Builder
	fmt.Fprintf(&b, "%-14s", "passkey depth")
	for _, n := range g.lengths {
		fmt.Fprintf(&b, " %10s", fmt.Sprintf("%d (%gx)", n, float64(n)/float64(trainLen)))
	}
	b.WriteByte('\n')
	for j, d := range g.depths {
		fmt.Fprintf(&b, "%-14s", fmt.Sprintf("%g%%", 100*d))
		for i := range g.lengths {
			if v := g.acc[i][j]; v < 0 {
				fmt.Fprintf(&b, " %10s", "n/a")
			} else {
				fmt.Fprintf(&b, " %10s", Percent(v))
			}
		}
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "accuracy: all five digits right, greedily; chance %s\n", Percent(data.PasskeyChance))
	return b.String()
}

// grid is retrieval accuracy by length (i) and depth (j); -1 where not applicable.
type grid struct {
	lengths []int
	depths  []float64
	acc     [][]float64
}

// draw writes the grid as a heat map.
func (g grid) draw(png, svg, title string, trainLen int) error {
	return plot.HeatMap(png, svg, title, trainLen, g.lengths, g.depths, g.acc)
}

// passkeyGrid arranges cells, averaging cells of the same length and depth (seeds).
func passkeyGrid(cells []PasskeyResult) grid {
	var g grid
	li, di := map[int]int{}, map[float64]int{}
	for _, c := range cells {
		if _, ok := li[c.Length]; !ok {
			li[c.Length] = len(g.lengths)
			g.lengths = append(g.lengths, c.Length)
		}
		if _, ok := di[c.Depth]; !ok {
			di[c.Depth] = len(g.depths)
			g.depths = append(g.depths, c.Depth)
		}
	}
	sum := make([][]float64, len(g.lengths))
	cnt := make([][]int, len(g.lengths))
	g.acc = make([][]float64, len(g.lengths))
	for i := range g.lengths {
		sum[i], cnt[i], g.acc[i] = make([]float64, len(g.depths)), make([]int, len(g.depths)), make([]float64, len(g.depths))
	}
	for _, c := range cells {
		if c.Applicable {
			i, j := li[c.Length], di[c.Depth]
			sum[i][j] += c.Accuracy
			cnt[i][j]++
		}
	}
	for i := range g.lengths {
		for j := range g.depths {
			g.acc[i][j] = -1
			if cnt[i][j] > 0 {
				g.acc[i][j] = sum[i][j] / float64(cnt[i][j])
			}
		}
	}
	return g
}
