package positions

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"extrapolate/experiments/measure"
	"extrapolate/experiments/plot"
)

// Files of a grid's breakpoints, in its folder.
const (
	GridCSV = "breakpoints_by_run.csv"
	GridPNG = "breakpoints_by_run.png"
	GridSVG = "breakpoints_by_run.svg"
)

// GridSection sets each rotary run's measured breakpoint beside its prediction across a grid's
// points (the base study: RoPE at several bases, training lengths and head dimensions); nil when
// no point has a run scored as trained whose critical dimension predicts a limit.
func (Measure) GridSection(points []measure.GridPoint) (measure.Section, error) {
	g := gridBreaks{}
	found := false
	for _, p := range points {
		rbs, err := RunBreaks(p.Report)
		if err != nil {
			return nil, fmt.Errorf("grid point %s: %w", p.Name, err)
		}
		var kept []RunBreak
		for _, rb := range rbs {
			if rb.Rotates && rb.AsTrained {
				kept = append(kept, rb)
				found = found || rb.Prediction.Finite()
			}
		}
		g.points = append(g.points, gridPoint{name: p.Name, trainLen: p.Report.TrainLen, runs: kept})
	}
	if !found {
		return nil, nil
	}
	return g, nil
}

type gridBreaks struct{ points []gridPoint }

type gridPoint struct {
	name     string
	trainLen int
	runs     []RunBreak
}

// Write writes every run's prediction and breakpoint as CSV, and the figure.
func (g gridBreaks) Write(dir string) (err error) {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.Write([]string{"point", "label", "seed", "train_len", "length", "critical_dimension", "rotated", "t_extra", "decay_holds", "breaks_at", "level"})
	var pts []plot.BreakPoint
	seen := map[string]int{} // point/label → its seeds drawn so far
	for _, p := range g.points {
		for _, r := range p.runs {
			c := r.Prediction.Critical
			tExtra, at := "", ""
			if r.Prediction.Finite() {
				tExtra = measure.CSVFloat(c.TExtra)
			}
			if r.Broke {
				at = strconv.Itoa(r.At)
			}
			w.Write([]string{p.name, r.Label, strconv.FormatUint(r.Seed, 10), strconv.Itoa(p.trainLen), strconv.Itoa(r.Length),
				strconv.Itoa(c.Dimension), strconv.Itoa(c.Rotated), tExtra, strconv.FormatBool(r.Prediction.DecayHolds), at, measure.CSVFloat(r.Level)})
			if r.Prediction.Finite() {
				// A label's seeds often break in the same bin: side by side, 2% apart, they stay
				// visible.
				k := seen[p.name+"/"+r.Label]
				seen[p.name+"/"+r.Label]++
				pts = append(pts, plot.BreakPoint{Group: p.name, Predicted: c.TExtra / float64(p.trainLen) * math.Pow(1.02, float64(k)-1),
					Measured: float64(measuredAt(r)) / float64(p.trainLen), Broke: r.Broke})
			}
		}
	}
	w.Flush()
	if err := measure.WriteFile(filepath.Join(dir, GridCSV), b.Bytes()); err != nil {
		return err
	}
	png := filepath.Join(dir, GridPNG)
	defer plot.Recover(png, &err)
	fig, err := plot.Breakpoints(fmt.Sprintf("Measured against predicted breakpoint, one point per run, a label's seeds side by side (shaded: within a factor %g)", PredictionFactor), pts, PredictionFactor)
	if err != nil {
		return err
	}
	return fig.Save(png, filepath.Join(dir, GridSVG))
}

// measuredAt is where a run broke, or its longest length if it did not.
func measuredAt(r RunBreak) int {
	if r.Broke {
		return r.At
	}
	return r.Length
}

// Markdown is the grid's table of predictions and breakpoints, a row per point and label.
func (g gridBreaks) Markdown(w io.Writer) {
	fmt.Fprintf(w, "\n## Where RoPE breaks: predicted and measured\n\n![measured against predicted breakpoint](%s)\n\n", GridPNG)
	fmt.Fprintf(w, "Each rotary run scored as trained (no scaling or map at evaluation): T_extra, the period of the first pair of dimensions that does not turn a full period within the training length (Liu et al. 2024, `position.CriticalOf`; none when every pair turns); whether Men et al.'s long-term decay B(m) = Σ cos(m·θ_i) stays non-negative up to the training length (their lower bound on the base, `position.DecayHolds`); and where the run breaks at its longest length (`positions.Breakpoint`: the loss %g%% above its in-window level), seed by seed, with the mean over seeds as a multiple of T_extra. Every run is in `%s`.\n\n", 100*BreakMargin, GridCSV)
	fmt.Fprintf(w, "| point | run | T_extra | decay (Men et al.) | breaks at, by seed | mean / T_extra |\n|---|---|---:|---|---|---:|\n")
	for _, p := range g.points {
		for _, label := range labelsOf(p.runs) {
			var cells []string
			var sum float64
			var first RunBreak
			n := 0
			for _, r := range p.runs {
				if r.Label != label {
					continue
				}
				if n == 0 {
					first = r
				}
				n++
				sum += float64(measuredAt(r))
				if r.Broke {
					cells = append(cells, strconv.Itoa(r.At))
				} else {
					cells = append(cells, ">"+strconv.Itoa(r.Length))
				}
			}
			pred, ratio := "none", "–"
			if first.Prediction.Finite() {
				t := first.Prediction.Critical.TExtra
				pred = fmt.Sprintf("%.0f (%s)", t, measure.Ratio(int(math.Round(t)), p.trainLen))
				ratio = fmt.Sprintf("%.3f", sum/float64(n)/t)
			}
			decay := "fails"
			if first.Prediction.DecayHolds {
				decay = "holds"
			}
			fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s |\n", p.name, label, pred, decay, strings.Join(cells, ", "), ratio)
		}
	}
	fmt.Fprintf(w, "\nA run that does not break within its longest length counts at that length (written >N), a bound on its breakpoint from below.\n")
}

// labelsOf lists the runs' labels in order of first appearance.
func labelsOf(runs []RunBreak) []string {
	var out []string
	for _, r := range runs {
		if !slices.Contains(out, r.Label) {
			out = append(out, r.Label)
		}
	}
	return out
}
