// Package accuracy is a measure registered from its own package, as examples/logbias is a
// position scheme: next-token accuracy, the share of scored targets that are the model's most
// likely token, at every evaluation length. It takes its numbers from the protocol's shared
// pass, so it costs no forward pass of its own. Import it for its side effect in
// plugins/plugins.go, which every command imports (_ "extrapolate/examples/accuracy"); then
// eval.measures: [accuracy] in any config or comparison adds it.
package accuracy

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"gonum.org/v1/plot/plotter"

	"extrapolate/data"
	"extrapolate/experiments/measure"
	"extrapolate/model"
)

// Files of a run folder and of a comparison folder.
const (
	RunCSV        = "accuracy.csv"
	ComparisonCSV = "accuracy_by_run.csv"
	ComparisonPNG = "accuracy_by_run.png"
	ComparisonSVG = "accuracy_by_run.svg"
)

func init() { measure.Register(Measure{}) }

// Measure is next-token accuracy by evaluation length.
type Measure struct{}

func (Measure) Name() string    { return "accuracy" }
func (Measure) Files() []string { return []string{RunCSV} }

// Start makes it observe the run's pass: it implements PassObserver.
func (Measure) Start(*measure.Evaluation) (measure.Recorder, error) { return &run{}, nil }

// Length is the accuracy at one evaluation length; the run's results file keeps them, under
// "accuracy".
type Length struct {
	Length     int     `json:"length"`
	Applicable bool    `json:"applicable"`
	Reason     string  `json:"reason,omitempty"`
	Tokens     int     `json:"tokens"`
	Right      int     `json:"right"`
	Accuracy   float64 `json:"accuracy"`
}

// run measures one run: the length under way, and those done.
type run struct {
	cur     Length
	lengths []Length
}

func (r *run) Length(n int) measure.LengthObserver {
	r.cur = Length{Length: n}
	return r
}

// Batch counts the scored targets of each window that are the most likely token.
func (r *run) Batch(g *model.Graph, ws []data.Window, _ []float64) {
	n := g.Len
	for b, w := range ws {
		for t := n - w.Score; t < n; t++ {
			if model.Argmax(g.Logits(), b*n+t) == g.Targets[b*n+t] {
				r.cur.Right++
			}
			r.cur.Tokens++
		}
	}
}

// End keeps the length's accuracy, or why it has none.
func (r *run) End(l measure.PassLength) {
	if l.Sum == nil { // not applicable, or not finite
		r.cur = Length{Length: l.Length, Reason: l.Reason}
	} else {
		r.cur.Applicable, r.cur.Accuracy = true, float64(r.cur.Right)/float64(r.cur.Tokens)
	}
	r.lengths = append(r.lengths, r.cur)
}

// Record keeps the accuracies in the results file and writes them as CSV.
func (r *run) Record(dir string, res *measure.Result) error {
	if err := res.SetMeasurement(Measure{}.Name(), r.lengths); err != nil {
		return err
	}
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.Write([]string{"length", "tokens", "right", "accuracy", "applicable", "reason"})
	for _, l := range r.lengths {
		w.Write([]string{strconv.Itoa(l.Length), strconv.Itoa(l.Tokens), strconv.Itoa(l.Right), strconv.FormatFloat(l.Accuracy, 'g', 8, 64),
			strconv.FormatBool(l.Applicable), l.Reason})
	}
	w.Flush()
	return measure.WriteFile(filepath.Join(dir, RunCSV), b.Bytes())
}

// Of reads a run's accuracies from its results; none when it was not measured.
func Of(res *measure.Result) ([]Length, error) {
	var ls []Length
	_, err := res.Measurement(Measure{}.Name(), &ls)
	return ls, err
}

// Summary is a line of the run's summary.
func (Measure) Summary(res *measure.Result) string {
	ls, err := Of(res)
	if err != nil || len(ls) == 0 {
		return ""
	}
	var cells []string
	for _, l := range ls {
		if l.Applicable {
			cells = append(cells, fmt.Sprintf("%d %.1f%%", l.Length, 100*l.Accuracy))
		}
	}
	return "next-token accuracy: " + strings.Join(cells, ", ") + "\n"
}

// stat is a label's accuracy at one length over its seeds.
type stat struct {
	seeds     int
	mean, std float64
}

// Section averages each label's accuracy over its seeds, by length.
func (Measure) Section(rep *measure.Report) (measure.Section, error) {
	s := section{rep: rep, stats: map[string]map[int]stat{}}
	for _, series := range rep.Series {
		byLen := map[int][]float64{}
		for _, r := range rep.Runs {
			if r.Label != series.Label || !r.Result.OK() {
				continue
			}
			ls, err := Of(r.Result)
			if err != nil {
				return nil, err
			}
			for _, l := range ls {
				if l.Applicable {
					byLen[l.Length] = append(byLen[l.Length], l.Accuracy)
				}
			}
		}
		for n, accs := range byLen {
			if s.stats[series.Label] == nil {
				s.stats[series.Label] = map[int]stat{}
			}
			mean, std := measure.MeanStd(accs)
			s.stats[series.Label][n] = stat{len(accs), mean, std}
		}
	}
	if len(s.stats) == 0 {
		return nil, nil
	}
	return s, nil
}

type section struct {
	rep   *measure.Report
	stats map[string]map[int]stat // label → length → accuracy over seeds
}

// Write writes every label's accuracy by length as CSV, and a figure in the comparison's panels
// and colours.
func (s section) Write(dir string) error {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.Write([]string{"label", "length", "seeds", "accuracy_mean", "accuracy_std"})
	lines := make([]measure.Line, len(s.rep.Series))
	for i, series := range s.rep.Series {
		lines[i].Label = series.Label
		for _, n := range s.rep.Lengths {
			st, ok := s.stats[series.Label][n]
			if !ok {
				continue
			}
			w.Write([]string{series.Label, strconv.Itoa(n), strconv.Itoa(st.seeds), strconv.FormatFloat(st.mean, 'g', 8, 64), strconv.FormatFloat(st.std, 'g', 8, 64)})
			lines[i].XYs = append(lines[i].XYs, plotter.XY{X: float64(n), Y: st.mean})
			lines[i].Low, lines[i].High = append(lines[i].Low, st.std), append(lines[i].High, st.std)
		}
	}
	w.Flush()
	if err := measure.WriteFile(filepath.Join(dir, ComparisonCSV), b.Bytes()); err != nil {
		return err
	}
	return s.rep.WriteFigure(filepath.Join(dir, ComparisonPNG), filepath.Join(dir, ComparisonSVG), measure.Figure{
		Title:  fmt.Sprintf("%s: next-token accuracy, mean ± std over seeds", s.rep.Name),
		XLabel: "evaluation length (tokens, log scale)", YLabel: "next-token accuracy", Lines: lines,
	})
}

// Markdown writes the figure and a table of accuracy by label and length.
func (s section) Markdown(w io.Writer) {
	rep := s.rep
	fmt.Fprintf(w, "\n## Next-token accuracy\n\n![next-token accuracy against evaluation length](%s)\n\n", ComparisonPNG)
	fmt.Fprintf(w, "The share of scored targets that are the model's most likely token (mean ± std over seeds):\n\n| run |")
	for _, n := range rep.Lengths {
		fmt.Fprintf(w, " %d (%gx) |", n, float64(n)/float64(rep.TrainLen))
	}
	fmt.Fprintf(w, "\n|---|%s\n", strings.Repeat("---:|", len(rep.Lengths)))
	for _, series := range rep.Series {
		fmt.Fprintf(w, "| %s |", series.Label)
		for _, n := range rep.Lengths {
			if st, ok := s.stats[series.Label][n]; ok {
				fmt.Fprintf(w, " %.1f%% ± %.1f%% |", 100*st.mean, 100*st.std)
			} else {
				fmt.Fprintf(w, " n/a |")
			}
		}
		fmt.Fprintf(w, "\n")
	}
}
