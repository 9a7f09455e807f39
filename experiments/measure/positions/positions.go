// Package positions is the measure of loss by position (loss_by_position): the mean loss at
// each position of the windows, at every evaluation length, from the sums the protocol's shared
// pass keeps, for every run. It shows where in a window a scheme starts to fail, which one
// perplexity per length cannot. It is written against the public measure API, as image/png is
// for image, and registered by package builtin. Across a comparison it reports each label's loss
// by position over seeds, a figure in octaves of positions and a table of three ranges.
package positions

import (
	"fmt"
	"math"

	"extrapolate/data"
	"extrapolate/experiments/config"
	"extrapolate/experiments/measure"
	"extrapolate/model"
	"extrapolate/position"
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
	r := &run{trainLen: ev.Config().Train.SeqLen}
	if s := ev.TrainScheme; s != nil && !position.IsPerLayer(s) {
		c, ok, err := position.CriticalOf(s, r.trainLen)
		if err != nil {
			return nil, err
		}
		if ok {
			r.critical = &Critical{Dimension: c.Dimension, Rotated: c.Rotated}
			if !math.IsInf(c.TExtra, 1) {
				r.critical.TExtra = &c.TExtra
			}
		}
	}
	return r, nil
}

// run measures one run.
type run struct {
	trainLen int
	lengths  []Length
	critical *Critical
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
	if err := writeRun(dir, res, r.lengths); err != nil {
		return err
	}
	k := Kept{Critical: r.critical}
	for _, pl := range r.lengths {
		if !pl.Applicable {
			continue
		}
		b := Break{Length: pl.Length}
		if pos, level, ok := Breakpoint(pl.Positions, r.trainLen); ok {
			b.Level, b.At = level, &pos
		} else {
			b.Level = level
		}
		k.Breaks = append(k.Breaks, b)
	}
	return res.SetMeasurement(Measure{}.Name(), k)
}

// Kept is what the results file keeps of a run's loss by position: the critical dimension of a
// rotary scheme (position.CriticalOf, T_extra null for no limit) and where the run breaks at
// each scored length (Breakpoint, At null where it does not).
type Kept struct {
	Critical *Critical `json:"critical,omitempty"`
	Breaks   []Break   `json:"breaks,omitempty"`
}

// Critical is position.Critical as a results file keeps it.
type Critical struct {
	Dimension int      `json:"dimension"`
	Rotated   int      `json:"rotated"`
	TExtra    *float64 `json:"t_extra"`
}

// Break is where a run breaks at one length, and the in-window level it rises from.
type Break struct {
	Length int     `json:"length"`
	Level  float64 `json:"level"`
	At     *int    `json:"at"`
}

// Summary says where the run breaks at its longest scored length and, for a rotary scheme,
// where its critical dimension predicts it would; nothing for a results file without them
// (written before they were kept).
func (Measure) Summary(res *measure.Result) string {
	var k Kept
	if ok, err := res.Measurement(Measure{}.Name(), &k); !ok || err != nil || len(k.Breaks) == 0 {
		return ""
	}
	last := k.Breaks[len(k.Breaks)-1]
	at := "does not break"
	if last.At != nil {
		at = fmt.Sprintf("breaks at position %d (%s)", *last.At, measure.Ratio(*last.At, res.TrainLen))
	}
	line := fmt.Sprintf("loss by position at %d: %s, %g%% above its level %.3f over positions %d..%d", last.Length, at, 100*BreakMargin, last.Level, res.TrainLen/2, res.TrainLen-1)
	if c := k.Critical; c != nil {
		limit := "no limit"
		if c.TExtra != nil {
			limit = fmt.Sprintf("a limit of %.0f (%s)", *c.TExtra, measure.Ratio(int(math.Round(*c.TExtra)), res.TrainLen))
		}
		line += fmt.Sprintf("; the critical dimension, %d of %d rotated (Liu et al. 2024), predicts %s", c.Dimension, c.Rotated, limit)
	}
	return line + "\n"
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
