// Package perplexity is the protocol's score as a measure: the perplexity of the same
// validation tokens at every evaluation length, from the protocol's shared pass, and, for a run
// with a RoPE scaling, of the same weights without it. Its numbers are the results file's own
// (measure.Result's Lengths, Unscaled and Warnings) and the comparison's series
// (measure.Report's Series), which every claim reads: what lives here are its files, its lines
// of a run's summary and its section of a report. It is written against the public measure
// API, as image/png is for image, and registered by package builtin, first.
package perplexity

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"extrapolate/data"
	"extrapolate/experiments/config"
	"extrapolate/experiments/measure"
	"extrapolate/experiments/plot"
	"extrapolate/model"
	"extrapolate/position"
)

// Files of the perplexity, in a run folder and in a comparison folder: a row or line per run
// there, so named apart from a run's files, whose columns differ.
const (
	RunCSV        = "ppl_vs_len.csv"
	RunPNG        = "ppl_vs_len.png"
	RunSVG        = "ppl_vs_len.svg"
	ComparisonCSV = "ppl_by_run.csv"
	ComparisonPNG = "ppl_by_run.png"
	ComparisonSVG = "ppl_by_run.svg"
)

// Measure is the protocol's score: the perplexity of the same validation tokens at
// every evaluation length, and, for a run with a RoPE scaling, of the same weights without it.
// Its numbers are Result's own fields (Lengths, Unscaled, Warnings), since every claim and a
// comparison's series are judged on them.
type Measure struct{}

func (Measure) Name() string                                           { return "perplexity" }
func (Measure) Files() []string                                        { return []string{RunCSV, RunPNG, RunSVG} }
func (Measure) Selects(config.Config) bool                             { return true }
func (Measure) Start(ev *measure.Evaluation) (measure.Recorder, error) { return &run{ev: ev}, nil }

// run measures one run.
type run struct {
	ev                *measure.Evaluation
	lengths, unscaled []measure.LengthResult
}

// lengthsSeen keeps each length's score from a pass.
type lengthsSeen struct{ lengths *[]measure.LengthResult }

func (l lengthsSeen) Length(int) measure.LengthObserver          { return l }
func (lengthsSeen) Batch(*model.Graph, []data.Window, []float64) {}
func (l lengthsSeen) End(pl measure.PassLength)                  { *l.lengths = append(*l.lengths, pl.LengthResult) }

func (r *run) Length(int) measure.LengthObserver { return lengthsSeen{&r.lengths} }

// Evaluate scores the same weights without the RoPE scaling, so that its effect shows apart
// from training.
func (r *run) Evaluate(ctx context.Context) error {
	if r.ev.Config().Position.Scaling == nil {
		return nil
	}
	var err error
	r.unscaled, err = ByLength(ctx, r.ev, r.ev.TrainScheme)
	return err
}

// ByLength runs the protocol's pass with scheme for the perplexity at every length alone: a
// run's without its RoPE scaling, and cmd/eval's under each scaling.
func ByLength(ctx context.Context, ev *measure.Evaluation, scheme position.Scheme) ([]measure.LengthResult, error) {
	var out []measure.LengthResult
	err := ev.Pass(ctx, scheme, lengthsSeen{&out})
	return out, err
}

// Record puts the scores into the result, and writes them as CSV and a plot.
func (r *run) Record(dir string, res *measure.Result) error {
	res.Lengths, res.Unscaled = r.lengths, r.unscaled
	res.Warnings = nonFiniteWarnings(res)
	if len(res.Lengths) == 0 {
		return nil
	}
	label := res.Scheme
	if res.Scaling != "" {
		label += " " + res.Scaling
	}
	curves := []plot.Curve{Curve(label, []*measure.Result{res})}
	if res.Unscaled != nil {
		curves = append(curves, Curve("no scaling, same weights", []*measure.Result{{Lengths: res.Unscaled}}))
	}
	if err := writePlot(dir, res.Name, res.TrainLen, curves); err != nil {
		return err
	}
	return measure.WriteFile(filepath.Join(dir, RunCSV), runCSV(res))
}

// nonFiniteWarnings says at which lengths the loss was not finite: the run is marked, and its
// summary says so, since a missing number in a table is easy to overlook.
func nonFiniteWarnings(res *measure.Result) []string {
	var out []string
	for _, l := range res.Lengths {
		if l.NonFinite {
			out = append(out, fmt.Sprintf("%s at length %d", l.Reason, l.Length))
		}
	}
	for _, l := range res.Unscaled {
		if l.NonFinite {
			out = append(out, fmt.Sprintf("%s at length %d without the scaling", l.Reason, l.Length))
		}
	}
	return out
}

// Summary is the run's perplexity by length, and its warnings.
func (Measure) Summary(r *measure.Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%8s %6s %8s %10s", "length", "ratio", "loss", "perplexity")
	if r.Unscaled != nil {
		fmt.Fprintf(&b, " %20s", "perplexity unscaled")
	}
	b.WriteByte('\n')
	for i, l := range r.Lengths {
		ratio := float64(l.Length) / float64(r.TrainLen)
		if !l.Applicable {
			fmt.Fprintf(&b, "%8d %5gx %8s %10s  (%s)\n", l.Length, ratio, "n/a", "n/a", l.Reason)
			continue
		}
		if l.Perplexity == nil {
			loss := "-"
			if l.Loss != nil {
				loss = fmt.Sprintf("%.4f", *l.Loss)
			}
			fmt.Fprintf(&b, "%8d %5gx %8s %10s  (%s)\n", l.Length, ratio, loss, "-", l.Reason)
			continue
		}
		fmt.Fprintf(&b, "%8d %5gx %8.4f %10.3f", l.Length, ratio, *l.Loss, *l.Perplexity)
		if r.Unscaled != nil && r.Unscaled[i].Perplexity != nil {
			fmt.Fprintf(&b, " %20.3f", *r.Unscaled[i].Perplexity)
		}
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "evaluated in %s\n", r.Protocol)
	for _, w := range r.Warnings {
		fmt.Fprintf(&b, "warning: %s\n", w)
	}
	return b.String()
}
