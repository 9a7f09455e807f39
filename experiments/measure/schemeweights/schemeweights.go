// Package schemeweights is the scheme_weights measure: it records the learned weights of a
// run's position scheme that decide how it extrapolates, once the run is trained, so that a
// comparison can report them without the checkpoints, which are not committed. For FIRE, each
// layer's threshold |m·L0| and c, and the MLP's input and bias at the farthest key of every
// evaluation length; for KERPLE, r1 and r2 by head. It measures the runs whose eval.measures
// name it, and records nothing for other schemes.
package schemeweights

import (
	"fmt"
	"path/filepath"
	"strings"

	"extrapolate/experiments/measure"
	"extrapolate/position"
)

// Files of a run folder and of a comparison folder.
const (
	RunJSON       = "scheme_weights.json"
	ComparisonCSV = "scheme_weights_by_run.csv"
	GridCSV       = "scheme_weights_by_point.csv"
	measureName   = "scheme_weights"
)

// Measure is the scheme_weights measure.
type Measure struct{}

func (Measure) Name() string    { return measureName }
func (Measure) Files() []string { return []string{RunJSON} }

// Weights is what the measure keeps of a run, in its results file under "scheme_weights" and in
// scheme_weights.json: the scheme and, for FIRE or KERPLE, each layer's weights.
type Weights struct {
	Scheme   string        `json:"scheme"`
	TrainLen int           `json:"train_len"`
	FIRE     []FIRELayer   `json:"fire,omitempty"`
	KERPLE   []KERPLELayer `json:"kerple,omitempty"`
}

// FIRELayer is one layer of a trained FIRE.
type FIRELayer struct {
	C float64 `json:"c"`
	M float64 `json:"m"`
	// Threshold is |m·L0|: a query before it divides its distances by ψ(threshold), so that
	// past the training length, up to the threshold, the MLP sees inputs training never gave it.
	Threshold float64 `json:"threshold"`
	// TrainedInput is the largest input training gave the MLP: at the last query of a training
	// window and its farthest key.
	TrainedInput float64 `json:"trained_input"`
	// Far is, at each evaluation length, the same for the last query of a window of that length.
	Far []Far `json:"far"`
}

// Far is a FIRE layer at the last query of a window of Length tokens and its farthest key,
// Length−1 back: the MLP's input there, and each head's bias.
type Far struct {
	Length int       `json:"length"`
	Input  float64   `json:"input"`
	Bias   []float64 `json:"bias"`
}

// KERPLELayer is one layer of a trained KERPLE: its bias is −r1·log(1 + r2·δ), by head.
type KERPLELayer struct {
	R1 []float64 `json:"r1"`
	R2 []float64 `json:"r2"`
}

// Start reads the trained scheme's weights: the run's whole measurement, made before any pass.
func (Measure) Start(ev *measure.Evaluation) (measure.Recorder, error) {
	c := ev.Config()
	w := &Weights{Scheme: ev.TrainScheme.Name(), TrainLen: c.Train.SeqLen}
	weights := ev.Model.SchemeWeights(0)
	// Through position's adapter, so that a scheme in a window (position.window) is read too.
	if f, ok := position.As[position.FIRE](ev.TrainScheme); ok {
		w.FIRE = fireLayers(f, weights, c.Train.SeqLen, c.Eval.Lengths)
	} else if k, ok := position.As[position.KERPLE](ev.TrainScheme); ok {
		w.KERPLE = kerpleLayers(k, weights)
	}
	return w, nil
}

// Record keeps the weights in the results file and writes them as JSON.
func (w *Weights) Record(dir string, res *measure.Result) error {
	if err := res.SetMeasurement(measureName, w); err != nil {
		return err
	}
	return measure.WriteJSON(filepath.Join(dir, RunJSON), w)
}

// Of reads a run's weights from its results; nil when it was not measured.
func Of(res *measure.Result) (*Weights, error) {
	var w Weights
	ok, err := res.Measurement(measureName, &w)
	if !ok || err != nil {
		return nil, err
	}
	return &w, nil
}

// Summary is a line of the run's summary: FIRE's thresholds.
func (Measure) Summary(res *measure.Result) string {
	w, err := Of(res)
	if err != nil || w == nil || len(w.FIRE) == 0 {
		return ""
	}
	var cells []string
	for l, f := range w.FIRE {
		cells = append(cells, fmt.Sprintf("layer %d %.0f", l, f.Threshold))
	}
	return "FIRE's thresholds: " + strings.Join(cells, ", ") + "\n"
}
