// Package passkey is the measure of passkey retrieval: for a run trained with passkeys
// (train.passkey), whether the model reads back a five-digit key planted at several depths of
// documents of every evaluation length, on documents of its own after the protocol's pass. It is
// written against the public measure API, as image/png is for image, and registered by package
// builtin. A run's results file keeps its cells (Of), which the claims on passkeys read; across
// a comparison it reports each label's accuracy by length over seeds (SeriesOf), a heat map per
// label and tables.
package passkey

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"path/filepath"
	"strconv"

	"extrapolate/data"
	"extrapolate/experiments/config"
	"extrapolate/experiments/measure"
)

// Files of passkey retrieval, in a run folder and in a comparison folder, where a heat map per
// label comes beside them, and the PNG and SVG are accuracy against length.
const (
	RunCSV         = "passkey.csv"
	RunJSON        = "passkey.json"
	RunPNG         = "passkey.png"
	RunSVG         = "passkey.svg"
	ComparisonCSV  = "passkey_by_run.csv"
	ComparisonJSON = "passkey_by_run.json"
	ComparisonPNG  = "passkey_vs_len.png"
	ComparisonSVG  = "passkey_vs_len.svg"
)

// Learned is the share of keys a series must retrieve at the training length to count as having
// learned the task: below it, the report and figure say so, and the claims on retrieval past
// the training length are undecided (experiments/claims).
const Learned = 0.9

// Measure is passkey retrieval by length and depth, on documents of its own, for a run
// trained with passkeys. The run's results file keeps its cells, under "passkey".
type Measure struct{}

func (Measure) Name() string { return "passkey" }
func (Measure) Files() []string {
	return []string{RunCSV, RunJSON, RunPNG, RunSVG}
}
func (Measure) Selects(c config.Config) bool { return c.Train.Passkey != nil }

func (Measure) Start(ev *measure.Evaluation) (measure.Recorder, error) { return &run{ev: ev}, nil }

// run measures one run.
type run struct {
	ev    *measure.Evaluation
	cells []Cell
}

func (r *run) Evaluate(ctx context.Context) error {
	var err error
	ids := r.ev.WindowIDs()
	r.cells, err = evaluate(ctx, r.ev.Model, r.ev.Scheme, ids, r.ev.Corpus, r.ev.Config().Eval, r.ev.Progress)
	return err
}

func (r *run) Record(dir string, res *measure.Result) error {
	if len(r.cells) == 0 {
		return nil
	}
	if err := res.SetMeasurement(Measure{}.Name(), r.cells); err != nil {
		return err
	}
	ft := 0
	if f := r.ev.Config().Train.Finetune; f != nil {
		ft = f.SeqLen
	}
	return writeRun(dir, res, r.cells, ft)
}

// Of is a run's passkey retrieval, as its results file keeps it; none when it has none
// or it does not read (which the report's section says).
func Of(res *measure.Result) []Cell {
	var cells []Cell
	if _, err := res.Measurement(Measure{}.Name(), &cells); err != nil {
		return nil
	}
	return cells
}

// Summary is the run's retrieval by depth and length.
func (Measure) Summary(res *measure.Result) string {
	if cells := Of(res); len(cells) > 0 {
		return textTable(cells, res.TrainLen)
	}
	return ""
}

// Section gathers retrieval by label, for the labels whose runs have it, every run's cells
// checked first (check).
func (Measure) Section(rep *measure.Report) (measure.Section, error) {
	for _, r := range rep.Runs {
		if err := check(r); err != nil {
			return nil, fmt.Errorf("%s: passkey: %w", filepath.Join(r.Dir, measure.ResultsJSON), err)
		}
	}
	sps := SeriesOf(rep)
	if len(sps) == 0 {
		return nil, nil
	}
	return section{rep, sps}, nil
}

// file is a run's passkey.json.
type file struct {
	Name     string  `json:"name"`
	Scheme   string  `json:"scheme"`
	Scaling  string  `json:"scaling,omitempty"`
	Seed     uint64  `json:"seed"`
	TrainLen int     `json:"train_len"`
	Chance   float64 `json:"chance"`
	Cells    []Cell  `json:"cells"`
}

// writeRun writes a run's passkey retrieval as CSV, JSON and a heat map, marking the length the
// run was fine-tuned at, fineTune, unless 0.
func writeRun(dir string, res *measure.Result, cells []Cell, fineTune int) error {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.Write([]string{"length", "ratio", "depth", "docs", "correct", "accuracy", "digits_right", "applicable", "reason", "chance"})
	for _, c := range cells {
		w.Write([]string{strconv.Itoa(c.Length), measure.CSVFloat(float64(c.Length) / float64(res.TrainLen)), measure.CSVFloat(c.Depth), strconv.Itoa(c.Docs),
			strconv.Itoa(c.Correct), measure.CSVFloat(c.Accuracy), measure.CSVFloat(c.Digits), strconv.FormatBool(c.Applicable), c.Reason, measure.CSVFloat(data.PasskeyChance)})
	}
	w.Flush()
	if err := measure.WriteFile(filepath.Join(dir, RunCSV), b.Bytes()); err != nil {
		return err
	}
	f := file{Name: res.Name, Scheme: res.Scheme, Scaling: res.Scaling, Seed: res.Seed, TrainLen: res.TrainLen, Chance: data.PasskeyChance, Cells: cells}
	if err := measure.WriteJSON(filepath.Join(dir, RunJSON), f); err != nil {
		return err
	}
	title := fmt.Sprintf("%s: passkey retrieval (chance %s)", res.Name, measure.Percent(data.PasskeyChance))
	return gridOf(cells).draw(filepath.Join(dir, RunPNG), filepath.Join(dir, RunSVG), title, res.TrainLen, fineTune)
}
