package measure

import (
	"extrapolate/experiments/config"
	"io"

	"extrapolate/data"
	"extrapolate/model"
)

// positionsMeasure is the mean loss at each position of the windows, at every length: where in
// a window a scheme starts to fail, which one perplexity per length cannot show. It takes the
// per-position sums the protocol's pass keeps.
type positionsMeasure struct{}

func (positionsMeasure) Name() string { return "loss_by_position" }
func (positionsMeasure) Files() []string {
	return []string{PositionsCSV, PositionsJSON, PositionsPNG, PositionsSVG}
}
func (positionsMeasure) Selects(config.Config) bool { return true }

func (positionsMeasure) Start(ev *Evaluation) (Recorder, error) {
	return &positionsRun{trainLen: ev.Config.Train.SeqLen}, nil
}

// positionsRun measures one run.
type positionsRun struct {
	trainLen int
	lengths  []PositionLoss
}

func (r *positionsRun) Length(int) LengthObserver                    { return r }
func (r *positionsRun) Batch(*model.Graph, []data.Window, []float64) {}

// End keeps the length's sums in buckets; a length not scored, or not finite, has none.
func (r *positionsRun) End(l PassLength) {
	pl := PositionLoss{Length: l.Length, Reason: l.Reason}
	if l.Sum != nil {
		pl.Applicable, pl.sum, pl.count = true, l.Sum, l.Count
		pl.bucket(r.trainLen)
	}
	r.lengths = append(r.lengths, pl)
}

func (r *positionsRun) Record(dir string, res *Result) error {
	if len(r.lengths) == 0 {
		return nil
	}
	return writePositions(dir, res, r.lengths)
}

// Section averages the runs' loss by position over seeds, each run's file read once and
// checked; a comparison whose runs all failed has no section.
func (positionsMeasure) Section(rep *Report) (Section, error) {
	byLabel, err := rep.seedPositions()
	if err != nil {
		return nil, err
	}
	sps, err := rep.positions(byLabel)
	if err != nil || len(sps) == 0 {
		return nil, err
	}
	binned, err := rep.binnedPositions(byLabel)
	if err != nil {
		return nil, err
	}
	return positionsSection{rep, sps, binned}, nil
}

// positionsSection is the comparison's loss by position, its figure's bins computed with it,
// so that writing it reads nothing.
type positionsSection struct {
	rep    *Report
	sps    []SeriesPositions
	binned []binnedCurve
}

func (s positionsSection) Write(dir string) error { return s.rep.writePositions(dir, s.sps, s.binned) }
func (s positionsSection) Markdown(w io.Writer)   { s.rep.positionsMarkdown(w, s.sps) }
