package attention

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"

	"extrapolate/experiments/measure"
)

// read reads a finished run's attention, checked against the run (file.check),
// when its config asks for it; nil for a run that was not asked to take it.
func read(r measure.RunResult) ([]Length, error) {
	if !slices.Contains(r.Config().Eval.Measures, Measure{}.Name()) {
		return nil, nil
	}
	path := filepath.Join(r.Dir, RunJSON)
	b, err := measure.ReadRunFile(path)
	if err != nil {
		return nil, err
	}
	var f file
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("%s: does not read as a run's attention: %v", path, err)
	}
	if err := f.check(r); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return f.Lengths, nil
}

// check checks a run's attention against the run and its results: the run's, at every
// evaluation length, taken only where the results have a finite loss, and there a head for each
// of every layer's, in order, each binned in octaves of queries over the whole window, with
// entropies and shares a distribution can have.
func (f *file) check(r measure.RunResult) error {
	if err := measure.SameRun(r, f.Name, f.Seed, f.TrainLen, f.Protocol); err != nil {
		return err
	}
	got := make([]int, len(f.Lengths))
	for i, al := range f.Lengths {
		got[i] = al.Length
	}
	if err := measure.SameLengths("lengths", got, r.Config().Eval.Lengths); err != nil {
		return err
	}
	for _, al := range f.Lengths {
		l, _ := r.Result.At(al.Length)
		var err error
		switch {
		case al.Applicable && !(l.Applicable && !l.NonFinite):
			err = fmt.Errorf("taken, but the results file has no finite loss there (%s)", l.Reason)
		case !al.Applicable && al.Reason == "":
			err = errors.New("not taken, without the reason")
		case !al.Applicable && len(al.Heads) > 0:
			err = errors.New("not taken, yet with heads")
		case al.Applicable:
			err = checkHeads(al, r.Config().Model.Layers, r.Config().Model.Heads)
		}
		if err != nil {
			return fmt.Errorf("length %d: %w", al.Length, err)
		}
	}
	return nil
}

// checkHeads checks one length's heads: layers × heads of them, layer by layer, over some
// windows, each in the octave bins octaveBins makes.
func checkHeads(al Length, layers, heads int) error {
	if al.Windows <= 0 {
		return fmt.Errorf("windows: %d, want a positive number", al.Windows)
	}
	if len(al.Heads) != layers*heads {
		return fmt.Errorf("%d heads, want %d (%d layers of %d)", len(al.Heads), layers*heads, layers, heads)
	}
	for k, hd := range al.Heads {
		if hd.Layer != k/heads || hd.Head != k%heads {
			return fmt.Errorf("head %d is layer %d head %d, want layer %d head %d", k, hd.Layer, hd.Head, k/heads, k%heads)
		}
		if err := checkBins(hd.Bins, al.Length); err != nil {
			return fmt.Errorf("layer %d head %d: %w", hd.Layer, hd.Head, err)
		}
	}
	return nil
}

// checkBins checks one head's bins: the octaves of queries 0, 1, 2–3, ... up to n-1,
// with finite entropies and shares of at least 0.
func checkBins(bins []Bin, n int) error {
	from := 0
	for _, b := range bins {
		to := min(max(from, 2*from-1), n-1)
		switch {
		case b.From != from || b.To != to:
			return fmt.Errorf("a bin of queries %d to %d, want %d to %d", b.From, b.To, from, to)
		case !finiteNonNegative(b.Entropy) || !finiteNonNegative(b.Uniform) || !finiteNonNegative(b.Far):
			return fmt.Errorf("queries %d to %d: entropy %v, uniform entropy %v, far share %v, want finite numbers of at least 0", b.From, b.To, b.Entropy, b.Uniform, b.Far)
		}
		from = to + 1
	}
	if from != n {
		return fmt.Errorf("bins end at query %d, want %d", from-1, n-1)
	}
	return nil
}

func finiteNonNegative(x float64) bool { return x >= 0 && !math.IsInf(x, 0) }
