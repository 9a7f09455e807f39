package positions

import (
	"math"

	"extrapolate/experiments/measure"
	"extrapolate/position"
)

// Prediction is what a rotary scheme's frequencies say of where it breaks, before it is
// measured: Liu et al.'s critical dimension and limit T_extra, and whether Men et al.'s long-term
// decay B(m) = Σ cos(m·θ_i) holds within the training length (the base at or above their bound).
type Prediction struct {
	Critical   position.Critical
	DecayHolds bool
	// InvFreq are the frequencies the prediction is made from, θ_i.
	InvFreq []float64
}

// PredictionOf is run r's prediction from its training scheme at trainLen positions; ok is false
// for a scheme that does not rotate or mixes schemes by layer, whose layers differ.
func PredictionOf(r measure.RunResult, trainLen int) (p Prediction, ok bool) {
	if r.Resolved == nil {
		return Prediction{}, false
	}
	train, _ := r.Resolved.Schemes()
	if position.IsPerLayer(train) {
		return Prediction{}, false
	}
	rot, err := position.RotationAt(train, trainLen)
	if err != nil || rot == nil {
		return Prediction{}, false
	}
	c, _, _ := position.CriticalOf(train, trainLen)
	return Prediction{Critical: c, DecayHolds: position.DecayHolds(rot.InvFreq, trainLen), InvFreq: rot.InvFreq}, true
}

// SeriesBreak is where a curve of loss by position breaks (Breakpoint), at its length.
type SeriesBreak struct {
	Label  string
	Length int
	// Level is the in-window loss; At the breakpoint, when Broke.
	Level float64
	At    int
	Broke bool
}

// Breaks is where each label of the comparison breaks at its longest length, on its mean loss
// over seeds: the report's table, and what the breakpoint claims judge.
func Breaks(rep *measure.Report) ([]SeriesBreak, error) {
	byLabel, err := seedBuckets(rep)
	if err != nil {
		return nil, err
	}
	sps, err := seriesOf(rep, byLabel)
	if err != nil {
		return nil, err
	}
	return breaksOf(longestPerLabel(sps), rep.TrainLen), nil
}

func breaksOf(sps []Series, trainLen int) []SeriesBreak {
	out := make([]SeriesBreak, len(sps))
	for i, sp := range sps {
		at, level, ok := Breakpoint(sp.Positions, trainLen)
		out[i] = SeriesBreak{Label: sp.Label, Length: sp.Length, Level: level, At: at, Broke: ok}
	}
	return out
}

// RunBreak is where one run breaks at its longest length, beside its prediction.
type RunBreak struct {
	SeriesBreak
	Seed       uint64
	Prediction Prediction
	Rotates    bool
	// AsTrained is false for a run scored through a RoPE scaling or a distance map, which its
	// training scheme's prediction is not about.
	AsTrained bool
}

// RunBreaks is where each ok run breaks at its longest applicable length, seed by seed: the
// points of the base study's figure.
func RunBreaks(rep *measure.Report) ([]RunBreak, error) {
	var out []RunBreak
	for _, r := range rep.Runs {
		if !r.Result.OK() || r.Dir == "" {
			continue
		}
		pls, err := read(r)
		if err != nil {
			return nil, err
		}
		var last *Length
		for i := range pls {
			if pls[i].Applicable {
				last = &pls[i]
			}
		}
		if last == nil {
			continue
		}
		at, level, broke := Breakpoint(last.Positions, rep.TrainLen)
		p, rotates := PredictionOf(r, rep.TrainLen)
		pc := r.Config().Position
		out = append(out, RunBreak{SeriesBreak: SeriesBreak{Label: r.Label, Length: last.Length, Level: level, At: at, Broke: broke},
			Seed: r.Seed, Prediction: p, Rotates: rotates, AsTrained: pc.Scaling == nil && pc.DistanceMap == nil})
	}
	return out, nil
}

// Finite reports whether a prediction has a limit: some pair does not turn within training.
func (p Prediction) Finite() bool { return !math.IsInf(p.Critical.TExtra, 1) }

// PredictionFactor is how near the measured breakpoint must come to T_extra for the base
// study's claim that the breakpoint follows the critical dimension, and the band of its
// figure: within a factor 2 either way. The pilot before the committed study (seed 7, head
// dimension 16, 64 tokens, bases 100 to 10⁶) measured 0.497 to 1.66 times T_extra
// (experiments/claims/base.go).
const PredictionFactor = 2.0
