// Package positions is the measure of loss by position (loss_by_position): the mean loss at
// each position of the windows, at every evaluation length, from the sums the protocol's shared
// pass keeps, for every run. It shows where in a window a scheme starts to fail, which one
// perplexity per length cannot. It is written against the public measure API, as image/png is
// for image, and registered by package builtin. Across a comparison it reports each label's loss
// by position over seeds, a figure in octaves of positions and a table of three ranges.
package positions

import (
	"extrapolate/data"
	"extrapolate/experiments/config"
	"extrapolate/experiments/measure"
	"extrapolate/model"
)

// Files of loss by position, in a run folder and in a comparison folder.
const (
	RunCSV         = "loss_by_position.csv"
	RunJSON        = "loss_by_position.json"
	RunPNG         = "loss_by_position.png"
	RunSVG         = "loss_by_position.svg"
	ComparisonCSV  = "loss_by_position_by_run.csv"
	ComparisonJSON = "loss_by_position_by_run.json"
	ComparisonPNG  = "loss_by_position_by_run.png"
	ComparisonSVG  = "loss_by_position_by_run.svg"
)

// Measure is the mean loss at each position of the windows, at every length: where in
// a window a scheme starts to fail, which one perplexity per length cannot show. It takes the
// per-position sums the protocol's pass keeps.
type Measure struct{}

func (Measure) Name() string { return "loss_by_position" }
func (Measure) Files() []string {
	return []string{RunCSV, RunJSON, RunPNG, RunSVG}
}
func (Measure) Selects(config.Config) bool { return true }

func (Measure) Start(ev *measure.Evaluation) (measure.Recorder, error) {
	return &run{trainLen: ev.Config.Train.SeqLen}, nil
}

// run measures one run.
type run struct {
	trainLen int
	lengths  []Length
}

func (r *run) Length(int) measure.LengthObserver            { return r }
func (r *run) Batch(*model.Graph, []data.Window, []float64) {}

// End keeps the length's sums in buckets; a length not scored, or not finite, has none.
func (r *run) End(l measure.PassLength) {
	pl := Length{Length: l.Length, Reason: l.Reason}
	if l.Sum != nil {
		pl.Applicable, pl.sum, pl.count = true, l.Sum, l.Count
		pl.bucket(r.trainLen)
	}
	r.lengths = append(r.lengths, pl)
}

func (r *run) Record(dir string, res *measure.Result) error {
	if len(r.lengths) == 0 {
		return nil
	}
	return writeRun(dir, res, r.lengths)
}

// Section averages the runs' loss by position over seeds, each run's file read once and
// checked; a comparison whose runs all failed has no section.
func (Measure) Section(rep *measure.Report) (measure.Section, error) {
	byLabel, err := seedBuckets(rep)
	if err != nil {
		return nil, err
	}
	sps, err := seriesOf(rep, byLabel)
	if err != nil || len(sps) == 0 {
		return nil, err
	}
	binned, err := binnedOf(rep, byLabel)
	if err != nil {
		return nil, err
	}
	return section{rep, sps, binned}, nil
}
