package positions

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strconv"

	"gonum.org/v1/plot/plotter"

	"extrapolate/experiments/measure"
)

// Series is one label's loss by position at one length, mean and standard deviation
// over its seeds.
type Series struct {
	Label     string    `json:"label"`
	Position  string    `json:"position"`
	Length    int       `json:"length"`
	Seeds     int       `json:"seeds"`
	Positions []Bucket  `json:"positions"` // Loss is the mean over seeds
	Std       []float64 `json:"loss_std"`  // by bucket
}

// byLength is loss by position by label, then by length: a list of buckets per seed.
type byLength map[string]map[int][][]Bucket

// seriesOf averages the runs' loss by position over seeds, by label and length.
func seriesOf(rep *measure.Report, byLabel byLength) ([]Series, error) {
	var out []Series
	for _, s := range rep.Series {
		for _, n := range rep.Lengths {
			runs := byLabel[s.Label][n]
			if len(runs) == 0 {
				continue
			}
			sp := Series{Label: s.Label, Position: s.Position, Length: n, Seeds: len(runs)}
			var err error
			if sp.Positions, sp.Std, err = averageSeeds(runs); err != nil {
				return nil, fmt.Errorf("%s at length %d: %w", s.Label, n, err)
			}
			out = append(out, sp)
		}
	}
	return out, nil
}

// averageSeeds gives the mean and standard deviation over seeds of each bucket's loss, and its
// tokens summed over seeds.
func averageSeeds(seeds [][]Bucket) ([]Bucket, []float64, error) {
	mean := slices.Clone(seeds[0])
	std := make([]float64, len(mean))
	for k, b := range mean {
		var losses []float64
		tokens := 0
		for _, r := range seeds {
			// Every seed scores the same tokens in the same buckets; a run that does not
			// (another protocol) is a mistake, not something to average over.
			if len(r) != len(mean) || r[k].From != b.From || r[k].To != b.To {
				return nil, nil, errors.New("seeds have different position buckets")
			}
			losses, tokens = append(losses, r[k].Loss), tokens+r[k].Tokens
		}
		mean[k].Tokens = tokens
		mean[k].Loss, std[k] = measure.MeanStd(losses)
	}
	return mean, std, nil
}

// seedBuckets reads, once, the loss by position of every ok run that has a folder (a report
// made in memory has none), checked (read).
func seedBuckets(rep *measure.Report) (byLength, error) {
	byLabel := byLength{}
	for _, r := range rep.Runs {
		if !r.Result.OK() || r.Dir == "" {
			continue
		}
		pls, err := read(r)
		if err != nil {
			return nil, err
		}
		if byLabel[r.Label] == nil {
			byLabel[r.Label] = map[int][][]Bucket{}
		}
		for _, pl := range pls {
			if pl.Applicable {
				byLabel[r.Label][pl.Length] = append(byLabel[r.Label][pl.Length], pl.Positions)
			}
		}
	}
	return byLabel, nil
}

// section is the comparison's loss by position, its figure's bins computed with it, so that
// writing it reads nothing.
type section struct {
	rep    *measure.Report
	sps    []Series
	binned []binnedCurve
}

// Write writes the comparison's loss by position (every label and length, mean ± std over
// seeds) and its figure.
func (s section) Write(dir string) error {
	rep, sps := s.rep, s.sps
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.Write([]string{"label", "position", "length", "from", "to", "seeds", "tokens", "loss_mean", "loss_std", "protocol"})
	protocol := rep.Runs[0].Config().Eval.Protocol()
	for _, sp := range sps {
		for k, p := range sp.Positions {
			w.Write([]string{sp.Label, sp.Position, strconv.Itoa(sp.Length), strconv.Itoa(p.From), strconv.Itoa(p.To),
				strconv.Itoa(sp.Seeds), strconv.Itoa(p.Tokens), measure.CSVFloat(p.Loss), measure.CSVFloat(sp.Std[k]), protocol})
		}
	}
	w.Flush()
	if err := measure.WriteFile(filepath.Join(dir, ComparisonCSV), b.Bytes()); err != nil {
		return err
	}
	if err := measure.WriteJSON(filepath.Join(dir, ComparisonJSON), struct {
		TrainLen int      `json:"train_len"`
		Protocol string   `json:"protocol"`
		Series   []Series `json:"series"`
	}{rep.TrainLen, protocol, sps}); err != nil {
		return err
	}
	return s.figure(dir, protocol)
}

// longestPerLabel keeps each label's longest length, in label order.
func longestPerLabel(sps []Series) []Series {
	var out []Series
	for _, sp := range sps {
		if k := len(out) - 1; k >= 0 && out[k].Label == sp.Label {
			out[k] = sp // lengths come in increasing order
			continue
		}
		out = append(out, sp)
	}
	return out
}

// Markdown is the report's loss-by-position section.
func (s section) Markdown(b io.Writer) {
	rep := s.rep
	if rep.AllOnTasks() {
		// Go source the task models never trained on: a record, not a result.
		fmt.Fprintf(b, "\n## Loss by position (not a result)\n\nEvery run here trained on tasks, never on the corpus: its loss by position on the corpus is kept as each run's record, in `%s` and `%s`, and not shown here.\n", ComparisonCSV, ComparisonPNG)
		return
	}
	fmt.Fprintf(b, "\n## Loss by position\n\n![loss by position in the window](%s)\n\n", ComparisonPNG)
	fmt.Fprintf(b, "Mean loss of the tokens at each position of the window, at each run's longest evaluation length (mean over seeds; exact positions up to %d, then %d log-spaced buckets per doubling). ", exactSpan*rep.TrainLen, bucketsPerOctave)
	fmt.Fprintf(b, "The figure averages them in octaves of positions (0, 1, 2–3, 4–7, …), %s. ", rep.PanelsNote())
	fmt.Fprintf(b, "Where a curve turns up past the training length (%d) is where the scheme breaks. Every length and bucket, with the standard deviation over seeds, is in `%s`.\n\n", rep.TrainLen, ComparisonCSV)
	fmt.Fprintf(b, "| run | length | loss at 1..%d | at %d..%d | at %d..%d |\n|---|---:|---:|---:|---:|\n", rep.TrainLen, rep.TrainLen+1, 4*rep.TrainLen, 4*rep.TrainLen+1, 16*rep.TrainLen)
	for _, sp := range longestPerLabel(s.sps) {
		fmt.Fprintf(b, "| %s | %d | %s | %s | %s |\n", sp.Label, sp.Length,
			rangeLoss(sp.Positions, 0, rep.TrainLen-1), rangeLoss(sp.Positions, rep.TrainLen, 4*rep.TrainLen-1), rangeLoss(sp.Positions, 4*rep.TrainLen, 16*rep.TrainLen-1))
	}
	s.breakpoints(b)
}

// breakpoints is the table of where each label breaks at its longest length (Breakpoint, on the
// mean over seeds), beside the critical dimension's prediction for a rotary scheme.
func (s section) breakpoints(b io.Writer) {
	L := s.rep.TrainLen
	fmt.Fprintf(b, "\nWhere each run breaks: the first position past the training length where the mean loss over seeds rises %g%% above its level over positions %d..%d and stays there (eighth-octave bins of positions; `positions.Breakpoint`), at each run's longest length; beside it, for a rotary scheme, the limit its critical dimension predicts, T_extra = the period of the first pair of dimensions that does not turn a full period within the training length (Liu et al. 2024; `position.CriticalOf`).\n\n", 100*BreakMargin, L/2, L-1)
	fmt.Fprintf(b, "| run | in-window loss | breaks at | predicted (T_extra) |\n|---|---:|---:|---:|\n")
	for _, br := range breaksOf(longestPerLabel(s.sps), L) {
		at := "does not"
		if br.Broke {
			at = fmt.Sprintf("%d (%s)", br.At, measure.Ratio(br.At, L))
		}
		fmt.Fprintf(b, "| %s | %.3f | %s | %s |\n", br.Label, br.Level, at, s.predicted(br.Label))
	}
}

// predicted is T_extra of label's training scheme, "–" for one that does not rotate (or a mix,
// whose layers differ).
func (s section) predicted(label string) string {
	for _, r := range s.rep.Runs {
		if r.Label != label || r.Resolved == nil {
			continue
		}
		p, ok := PredictionOf(r, s.rep.TrainLen)
		switch {
		case !ok:
			return "–"
		case !p.Finite():
			return "none"
		}
		return fmt.Sprintf("%.0f (%s)", p.Critical.TExtra, measure.Ratio(int(math.Round(p.Critical.TExtra)), s.rep.TrainLen))
	}
	return "–"
}

// rangeLoss is the token-weighted mean loss of the buckets inside positions from..to, or "–".
func rangeLoss(ps []Bucket, from, to int) string {
	var sum float64
	tokens := 0
	for _, p := range ps {
		if p.From >= from && p.To <= to {
			sum += p.Loss * float64(p.Tokens)
			tokens += p.Tokens
		}
	}
	if tokens == 0 {
		return "–"
	}
	return fmt.Sprintf("%.3f", sum/float64(tokens))
}

// figure draws every series' loss by position at its longest length, in octave bins of
// positions, mean ± std over seeds, in a panel per family.
func (s section) figure(dir, protocol string) error {
	rep, binned := s.rep, s.binned
	longest := 0
	for _, b := range binned {
		longest = max(longest, b.Length)
	}
	lines := make([]measure.Line, len(rep.Series))
	for i, b := range binned {
		lines[i].Label = rep.Series[i].Label
		if b.Length != longest {
			lines[i].Label += fmt.Sprintf(" (length %d)", b.Length)
		}
		for k, p := range b.Bins {
			// At the bin's geometric middle in tokens seen, position+1.
			x := math.Sqrt(float64(p.From+1) * float64(p.To+1))
			lines[i].XYs = append(lines[i].XYs, plotter.XY{X: x, Y: p.Loss})
			lines[i].Low, lines[i].High = append(lines[i].Low, b.Std[k]), append(lines[i].High, b.Std[k])
		}
	}
	f := measure.Figure{
		Title: fmt.Sprintf("%s: loss by position at length %d, in octaves of positions, mean ± std over %d seeds, %s",
			rep.Name, longest, len(rep.Seeds), protocol),
		XLabel: "tokens seen (position in the window + 1, log scale)", YLabel: "loss (nats per token)",
		Lines: lines,
	}
	return rep.WriteFigure(filepath.Join(dir, ComparisonPNG), filepath.Join(dir, ComparisonSVG), f)
}
