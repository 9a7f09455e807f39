package positions

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strconv"

	"gonum.org/v1/plot/plotter"

	"extrapolate/experiments/measure"
	"extrapolate/experiments/plot"
)

// Length is the mean loss at each position of the windows of one evaluation length: where
// in a window a scheme starts to fail, which one perplexity per length cannot show.
type Length struct {
	Length     int    `json:"length"`
	Applicable bool   `json:"applicable"`
	Reason     string `json:"reason,omitempty"`
	// Positions are exact up to exactSpan times the training length, then log-spaced buckets.
	Positions []Bucket `json:"positions"`

	sum   []float64 // per position: the sum of the scored targets' losses
	count []int     // and how many were scored
}

// Bucket is the mean loss of the targets scored at positions From to To (inclusive; 0
// is a window's first token, predicted from no context).
type Bucket struct {
	From   int     `json:"from"`
	To     int     `json:"to"`
	Tokens int     `json:"tokens"`
	Loss   float64 `json:"loss"`
}

// Past exactSpan training lengths, positions are grouped in bucketsPerOctave log-spaced buckets
// per doubling: the detail that matters is around the training length, and a plot of a thousand
// noisy points per curve would hide it.
const (
	exactSpan        = 2
	bucketsPerOctave = 8
)

// bucket fills Positions from the per-position sums, for a model trained at trainLen.
func (pl *Length) bucket(trainLen int) {
	pl.Positions = nil
	exact := exactSpan * trainLen
	for from := 0; from < len(pl.sum); {
		to := from
		if from >= exact {
			k := math.Round(bucketsPerOctave * math.Log2(float64(from)/float64(exact)))
			next := int(math.Round(float64(exact) * math.Exp2((k+1)/bucketsPerOctave)))
			to = min(max(next, from+1), len(pl.sum)) - 1
		}
		b := Bucket{From: from, To: to}
		var sum float64
		for t := from; t <= to; t++ {
			sum += pl.sum[t]
			b.Tokens += pl.count[t]
		}
		if b.Tokens > 0 {
			b.Loss = sum / float64(b.Tokens)
			pl.Positions = append(pl.Positions, b)
		}
		from = to + 1
	}
}

// file is a run's loss_by_position.json.
type file struct {
	Name     string   `json:"name"`
	Scheme   string   `json:"scheme"`
	Scaling  string   `json:"scaling,omitempty"`
	Seed     uint64   `json:"seed"`
	TrainLen int      `json:"train_len"`
	Protocol string   `json:"protocol"`
	Lengths  []Length `json:"lengths"`
}

// writeRun writes a run's loss by position as CSV, JSON and a plot with a curve per
// evaluation length.
func writeRun(dir string, res *measure.Result, pls []Length) error {
	f := file{Name: res.Name, Scheme: res.Scheme, Scaling: res.Scaling, Seed: res.Seed, TrainLen: res.TrainLen,
		Protocol: res.Protocol, Lengths: pls}
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.Write([]string{"length", "from", "to", "tokens", "loss", "protocol"})
	var series []plot.Series
	for _, pl := range pls {
		for _, p := range pl.Positions {
			w.Write([]string{strconv.Itoa(pl.Length), strconv.Itoa(p.From), strconv.Itoa(p.To), strconv.Itoa(p.Tokens), measure.CSVFloat(p.Loss), res.Protocol})
		}
		if pl.Applicable {
			series = append(series, plotSeries("length "+strconv.Itoa(pl.Length), pl.Positions))
		}
	}
	w.Flush()
	if err := measure.WriteFile(filepath.Join(dir, RunCSV), b.Bytes()); err != nil {
		return err
	}
	if err := measure.WriteJSON(filepath.Join(dir, RunJSON), f); err != nil {
		return err
	}
	title := res.Name + ": loss by position, " + res.Protocol
	return plot.Positions(filepath.Join(dir, RunPNG), filepath.Join(dir, RunSVG), title, res.TrainLen, series)
}

// plotSeries is loss by position as a line: x is the number of tokens seen, position+1, at
// the middle of each bucket.
func plotSeries(label string, ps []Bucket) plot.Series {
	s := plot.Series{Label: label}
	for _, p := range ps {
		s.XYs = append(s.XYs, plotter.XY{X: float64(p.From+p.To)/2 + 1, Y: p.Loss})
	}
	return s
}

// read reads a finished run's loss by position, checked against its results
// (file.check): a run has it at every length.
func read(r measure.RunResult) ([]Length, error) {
	path := filepath.Join(r.Dir, RunJSON)
	b, err := measure.ReadRunFile(path)
	if err != nil {
		return nil, err
	}
	var f file
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("%s: does not read as a run's loss by position: %v", path, err)
	}
	if err := f.check(r); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return f.Lengths, nil
}

// check checks a run's loss by position against the run and its results: the run's, at every
// evaluation length, scored exactly where the results have a finite loss, and there in buckets
// that cover every position of the window once, in order, and hold every token the length
// scored, each with a loss a cross-entropy can have.
func (f *file) check(r measure.RunResult) error {
	if err := measure.SameRun(r, f.Name, f.Seed, f.TrainLen, f.Protocol); err != nil {
		return err
	}
	got := make([]int, len(f.Lengths))
	for i, pl := range f.Lengths {
		got[i] = pl.Length
	}
	if err := measure.SameLengths("lengths", got, r.Config().Eval.Lengths); err != nil {
		return err
	}
	for _, pl := range f.Lengths {
		l, _ := r.Result.At(pl.Length)
		scored := l.Applicable && !l.NonFinite
		var err error
		switch {
		case pl.Applicable && !scored:
			err = fmt.Errorf("scored, but the results file has no finite loss there (%s)", l.Reason)
		case !pl.Applicable && scored:
			err = errors.New("not scored, but the results file has a loss there")
		case !pl.Applicable && len(pl.Positions) > 0:
			err = errors.New("not scored, yet with positions")
		case pl.Applicable:
			err = checkBuckets(pl.Positions, pl.Length, l.Tokens)
		}
		if err != nil {
			return fmt.Errorf("length %d: %w", pl.Length, err)
		}
	}
	return nil
}

// checkBuckets checks one length's buckets: every position from 0 to n-1 once, in order, with
// tokens, together the tokens the length scored, and losses a cross-entropy can have.
func checkBuckets(ps []Bucket, n, tokens int) error {
	next, total := 0, 0
	for _, p := range ps {
		switch {
		case p.From != next || p.To < p.From || p.To >= n:
			return fmt.Errorf("a bucket of positions %d to %d, want one from %d, ending by %d: buckets cover every position once, in order", p.From, p.To, next, n-1)
		case p.Tokens <= 0:
			return fmt.Errorf("positions %d to %d: tokens %d, want a positive number", p.From, p.To, p.Tokens)
		case !(p.Loss >= 0) || math.IsInf(p.Loss, 0):
			return fmt.Errorf("positions %d to %d: loss %v, want a finite number of at least 0", p.From, p.To, p.Loss)
		}
		next, total = p.To+1, total+p.Tokens
	}
	switch {
	case next != n:
		return fmt.Errorf("buckets end at position %d, want %d", next-1, n-1)
	case total != tokens:
		return fmt.Errorf("buckets hold %d tokens, but the length scored %d", total, tokens)
	}
	return nil
}
