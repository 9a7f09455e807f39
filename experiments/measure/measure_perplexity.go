package measure

import (
	"bytes"
	"context"
	"encoding/csv"
	"extrapolate/experiments/config"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"extrapolate/data"
	"extrapolate/experiments/plot"
	"extrapolate/model"
	"extrapolate/position"
)

// perplexityMeasure is the protocol's score: the perplexity of the same validation tokens at
// every evaluation length, and, for a run with a RoPE scaling, of the same weights without it.
// Its numbers are Result's own fields (Lengths, Unscaled, Warnings), since every claim and a
// comparison's series are judged on them.
type perplexityMeasure struct{}

func (perplexityMeasure) Name() string                           { return "perplexity" }
func (perplexityMeasure) Files() []string                        { return []string{ResultsCSV, PlotPNG, PlotSVG} }
func (perplexityMeasure) Selects(config.Config) bool             { return true }
func (perplexityMeasure) Start(ev *Evaluation) (Recorder, error) { return &perplexityRun{ev: ev}, nil }

// perplexityRun measures one run.
type perplexityRun struct {
	ev                *Evaluation
	lengths, unscaled []LengthResult
}

// lengthsSeen keeps each length's score from a pass.
type lengthsSeen struct{ lengths *[]LengthResult }

func (l lengthsSeen) Length(int) LengthObserver                  { return l }
func (lengthsSeen) Batch(*model.Graph, []data.Window, []float64) {}
func (l lengthsSeen) End(pl PassLength)                          { *l.lengths = append(*l.lengths, pl.LengthResult) }

func (r *perplexityRun) Length(int) LengthObserver { return lengthsSeen{&r.lengths} }

// Evaluate scores the same weights without the RoPE scaling, so that its effect shows apart
// from training.
func (r *perplexityRun) Evaluate(ctx context.Context) error {
	if r.ev.Config.Position.Scaling == nil {
		return nil
	}
	var err error
	r.unscaled, err = r.ev.Perplexities(ctx, r.ev.TrainScheme)
	return err
}

// Perplexities runs the pass with scheme for the perplexity at every length alone.
func (ev *Evaluation) Perplexities(ctx context.Context, scheme position.Scheme) ([]LengthResult, error) {
	var out []LengthResult
	err := ev.Pass(ctx, scheme, lengthsSeen{&out})
	return out, err
}

// Record puts the scores into the result, and writes them as CSV and a plot.
func (r *perplexityRun) Record(dir string, res *Result) error {
	res.Lengths, res.Unscaled = r.lengths, r.unscaled
	res.Warnings = nonFiniteWarnings(res)
	if len(res.Lengths) == 0 {
		return nil
	}
	curves := []plot.Curve{CurveOf(res.Scheme+parenthesised(res.Scaling), []*Result{res})}
	if res.Unscaled != nil {
		curves = append(curves, CurveOf("no scaling, same weights", []*Result{{Lengths: res.Unscaled}}))
	}
	if err := writePlot(dir, res.Name, res.TrainLen, curves); err != nil {
		return err
	}
	return WriteFile(filepath.Join(dir, ResultsCSV), resultCSV(res))
}

// nonFiniteWarnings says at which lengths the loss was not finite: the run is marked, and its
// summary says so, since a missing number in a table is easy to overlook.
func nonFiniteWarnings(res *Result) []string {
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

// LengthColumns and LengthRow are the columns of one length's result, as a run's ppl_vs_len.csv
// and cmd/eval's ppl_by_scaling.csv write them.
var LengthColumns = []string{"length", "ratio", "loss", "perplexity", "tokens", "applicable", "reason", "protocol"}

func LengthRow(l LengthResult, trainLen int, protocol string) []string {
	return []string{strconv.Itoa(l.Length), CSVFloat(float64(l.Length) / float64(trainLen)), csvFloatOrEmpty(l.Loss), csvFloatOrEmpty(l.Perplexity),
		strconv.Itoa(l.Tokens), strconv.FormatBool(l.Applicable), l.Reason, protocol}
}

func resultCSV(res *Result) []byte {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	head := LengthColumns
	if res.Unscaled != nil {
		head = append(head[:len(head):len(head)], "unscaled_loss", "unscaled_perplexity")
	}
	w.Write(head)
	for i, l := range res.Lengths {
		row := LengthRow(l, res.TrainLen, res.Protocol)
		if res.Unscaled != nil {
			row = append(row, csvFloatOrEmpty(res.Unscaled[i].Loss), csvFloatOrEmpty(res.Unscaled[i].Perplexity))
		}
		w.Write(row)
	}
	w.Flush()
	return b.Bytes()
}

// Summary is the run's perplexity by length, and its warnings.
func (perplexityMeasure) Summary(r *Result) string {
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

// Section is the comparison's perplexity: its series' statistics (Report.Series), which the
// report holds for the claims.
func (perplexityMeasure) Section(rep *Report) (Section, error) { return perplexitySection{rep}, nil }

type perplexitySection struct{ rep *Report }

// Write writes the perplexity of every run and series as CSV, and its figure.
func (s perplexitySection) Write(dir string) error {
	if err := WriteFile(filepath.Join(dir, ComparisonCSV), s.rep.PerplexityCSV()); err != nil {
		return err
	}
	return s.rep.writePerplexityFigure(dir)
}

// Markdown writes the figure and the table of every series' perplexity by length.
func (s perplexitySection) Markdown(w io.Writer) {
	rep := s.rep
	p := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	p("![perplexity against evaluation length](%s)\n\n", ComparisonPNG)
	p("The figure has %s.\n\n", rep.PanelsNote())

	p("## Perplexity (mean ± standard deviation over seeds)\n\n")
	if rep.AllOnTasks() {
		p("Every run here trained on tasks, never on the corpus: this is the perplexity of a text the models never saw, " +
			"kept as every run's record, not a result; the lengths' ratios are to the first run's training length. The results are in the tasks' section.\n\n")
	}
	p("| run | position |")
	for _, n := range rep.Lengths {
		p(" %d (%gx) |", n, float64(n)/float64(rep.TrainLen))
	}
	p("\n|---|---|%s\n", strings.Repeat("---:|", len(rep.Lengths)))
	for _, s := range rep.Series {
		p("| %s | %s |", s.Label, s.Position)
		for _, st := range s.Stats {
			p(" %s |", FormatStat(st))
		}
		p("\n")
	}
	p("\nn/a: the scheme cannot, by design, be evaluated at that length (learned positions past their table).\n")
	for _, s := range rep.Series {
		if len(s.Failed) > 0 {
			rest := "its row averages the other seeds"
			if len(s.Failed) == rep.runsOf(s.Label) {
				rest = "its row has no numbers, and no claim is decided on it"
			}
			p("\n**%s failed** for seeds %v (training diverged); %s.\n", s.Label, s.Failed, rest)
		}
		for _, st := range s.Stats {
			if st.NonFinite != nil {
				p("\n**%s at %d: %s** for seeds %v; the cell averages the other seeds, and no claim is decided on it.\n", s.Label, st.Length, st.NonFiniteReason, st.NonFinite)
			}
		}
	}
}

// PerplexityCSV has a row per run, seed and length, then rows with seed "mean" and "std" per run and
// length.
func (rep *Report) PerplexityCSV() []byte {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.Write([]string{"label", "position", "seed", "length", "ratio", "loss", "perplexity", "status", "protocol"})
	ratio := func(n int) string { return CSVFloat(float64(n) / float64(rep.TrainLen)) }
	protocol := ""
	if len(rep.Runs) > 0 {
		protocol = rep.Runs[0].Config.Eval.Protocol() // the same for every run: Plan checks it
	}
	for _, r := range rep.Runs {
		pos := PositionOf(r.Config)
		seed := strconv.FormatUint(r.Seed, 10)
		if r.Result.Status != "ok" {
			w.Write([]string{r.Label, pos, seed, "", "", "", "", "failed: " + r.Result.Error, protocol})
			continue
		}
		for _, l := range r.Result.Lengths {
			status := "ok"
			switch {
			case !l.Applicable:
				status = "not applicable"
			case l.NonFinite:
				status = l.Reason
			}
			w.Write([]string{r.Label, pos, seed, strconv.Itoa(l.Length), ratio(l.Length), csvFloatOrEmpty(l.Loss), csvFloatOrEmpty(l.Perplexity), status, protocol})
		}
	}
	for _, s := range rep.Series {
		for _, st := range s.Stats {
			status := "ok"
			if st.NonFinite != nil {
				status = fmt.Sprintf("%s for seeds %v, left out", st.NonFiniteReason, st.NonFinite)
			}
			if st.Seeds == 0 {
				switch {
				case st.NonFinite != nil:
				case st.NotApplicable != "":
					status = "not applicable"
				case st.Failed != nil:
					status = fmt.Sprintf("failed for seeds %v", st.Failed)
				}
				w.Write([]string{s.Label, s.Position, "mean", strconv.Itoa(st.Length), ratio(st.Length), "", "", status, protocol})
				continue
			}
			w.Write([]string{s.Label, s.Position, "mean", strconv.Itoa(st.Length), ratio(st.Length), CSVFloat(st.LossMean), CSVFloat(st.PPLMean), status, protocol})
			w.Write([]string{s.Label, s.Position, "std", strconv.Itoa(st.Length), ratio(st.Length), CSVFloat(st.LossStd), CSVFloat(st.PPLStd), status, protocol})
		}
	}
	w.Flush()
	return b.Bytes()
}

// AllOnTasks reports whether the comparison has runs and every one trained on tasks
// (config.Task), never on the corpus.
func (rep *Report) AllOnTasks() bool {
	for _, r := range rep.Runs {
		if r.Config.Task == nil {
			return false
		}
	}
	return len(rep.Runs) > 0
}
