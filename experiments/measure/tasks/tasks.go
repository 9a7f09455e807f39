// Package tasks is the measure of length generalisation on tasks (package task): exact match
// and per-token accuracy by size, on the same held-out examples for every run, written against
// the public measure API, as image/png is for image, and registered by package builtin. It
// measures every run with a task section, and reports, across a comparison, each task's
// accuracy by size as small multiples, a table and the numbers the claims on tasks read (Stats).
package tasks

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"extrapolate/experiments/config"
	"extrapolate/experiments/measure"
)

// Files of a run folder.
const (
	RunCSV  = "tasks.csv"
	RunJSON = "tasks.json"
)

// Measure is exact match by task and size.
type Measure struct{}

func (Measure) Name() string    { return "tasks" }
func (Measure) Files() []string { return []string{RunCSV, RunJSON} }

// Selects measures every run trained on tasks.
func (Measure) Selects(c config.Config) bool { return c.Task != nil }

func (Measure) Start(ev *measure.Evaluation) (measure.Recorder, error) { return &run{ev: ev}, nil }

// run measures one run.
type run struct {
	ev    *measure.Evaluation
	cells []Cell
}

// Evaluate scores the run's tasks with the scheme it is evaluated with.
func (r *run) Evaluate(ctx context.Context) error {
	var err error
	r.cells, err = Score(ctx, r.ev)
	return err
}

// Record keeps the cells in the results file, under "tasks", and writes them as CSV and JSON.
func (r *run) Record(dir string, res *measure.Result) error {
	if len(r.cells) == 0 {
		return nil
	}
	if err := res.SetMeasurement(Measure{}.Name(), r.cells); err != nil {
		return err
	}
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.Write(Columns)
	for _, c := range r.cells {
		w.Write(c.Row())
	}
	w.Flush()
	if err := measure.WriteFile(filepath.Join(dir, RunCSV), b.Bytes()); err != nil {
		return err
	}
	return measure.WriteJSON(filepath.Join(dir, RunJSON), struct {
		Name  string `json:"name"`
		Seed  uint64 `json:"seed"`
		Cells []Cell `json:"cells"`
	}{res.Name, res.Seed, r.cells})
}

// Columns name the fields of a cell's CSV row (Cell.Row).
var Columns = []string{"task", "size", "ratio", "length", "examples", "exact", "exact_match", "exact_match_low", "exact_match_high",
	"tokens", "tokens_right", "token_accuracy", "applicable", "reason"}

// Row is the cell as a CSV row, in the order of Columns.
func (c Cell) Row() []string {
	return []string{c.Task, strconv.Itoa(c.Size), measure.CSVFloat(c.Ratio), strconv.Itoa(c.Length), strconv.Itoa(c.Examples),
		strconv.Itoa(c.Exact), measure.CSVFloat(c.ExactMatch), measure.CSVFloat(c.Low), measure.CSVFloat(c.High),
		strconv.Itoa(c.Tokens), strconv.Itoa(c.TokensRight), measure.CSVFloat(c.TokenAccuracy), strconv.FormatBool(c.Applicable), c.Reason}
}

// Of reads a run's cells from its results; none when it was not measured.
func Of(res *measure.Result) ([]Cell, error) {
	var cells []Cell
	_, err := res.Measurement(Measure{}.Name(), &cells)
	return cells, err
}

// Summary is a line per task: exact match at each size.
func (Measure) Summary(res *measure.Result) string {
	cells, err := Of(res)
	if err != nil || len(cells) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("exact match by size (x the largest training size):\n")
	for i, c := range cells {
		if i == 0 || cells[i-1].Task != c.Task {
			if i > 0 {
				b.WriteByte('\n')
			}
			fmt.Fprintf(&b, "  %-16s", c.Task)
		}
		if c.Applicable {
			fmt.Fprintf(&b, " %d (%.3gx) %s", c.Size, c.Ratio, measure.Percent(c.ExactMatch))
		} else {
			fmt.Fprintf(&b, " %d (%.3gx) n/a", c.Size, c.Ratio)
		}
		if i == len(cells)-1 {
			b.WriteByte('\n')
		}
	}
	return b.String()
}
