package attention

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
	"strings"

	"gonum.org/v1/plot/plotter"

	"extrapolate/experiments/measure"
)

// Stat is a bin's attention over seeds: the mean and standard deviation of each
// seed's value.
type Stat struct {
	From        int     `json:"from"`
	To          int     `json:"to"`
	Uniform     float64 `json:"uniform_entropy"`
	EntropyMean float64 `json:"entropy_mean"`
	EntropyStd  float64 `json:"entropy_std"`
	FarMean     float64 `json:"far_mass_mean"`
	FarStd      float64 `json:"far_mass_std"`
}

// HeadStat is one head's attention over seeds.
type HeadStat struct {
	Layer int    `json:"layer"`
	Head  int    `json:"head"`
	Bins  []Stat `json:"bins"`
}

// Series is one label's attention at one length, over its seeds.
type Series struct {
	Label    string `json:"label"`
	Position string `json:"position"`
	Length   int    `json:"length"`
	Seeds    int    `json:"seeds"`
	// All is the mean over layers and heads: each seed's, then over seeds.
	All   []Stat     `json:"all"`
	Heads []HeadStat `json:"heads"`
}

// Section gathers every label's attention by length; a comparison none of whose runs has
// attention diagnostics has no section.
func (Measure) Section(rep *measure.Report) (measure.Section, error) {
	var sas []Series
	for _, s := range rep.Series {
		byLen, err := seedHeads(rep, s.Label)
		if err != nil {
			return nil, err
		}
		for _, n := range rep.Lengths {
			if len(byLen[n]) == 0 {
				continue
			}
			sa, err := seriesOf(byLen[n])
			if err != nil {
				return nil, fmt.Errorf("%s at length %d: %w", s.Label, n, err)
			}
			sa.Label, sa.Position, sa.Length = s.Label, s.Position, n
			sas = append(sas, sa)
		}
	}
	if len(sas) == 0 {
		return nil, nil
	}
	return section{rep, sas}, nil
}

// seedHeads reads the attention of a label's ok runs: by length, each seed's heads.
func seedHeads(rep *measure.Report, label string) (map[int][][]Head, error) {
	byLen := map[int][][]Head{}
	for _, r := range rep.Runs {
		if r.Label != label || !r.Result.OK() || r.Dir == "" {
			continue
		}
		als, err := read(r)
		if err != nil {
			return nil, err
		}
		for _, al := range als {
			if al.Applicable {
				byLen[al.Length] = append(byLen[al.Length], al.Heads)
			}
		}
	}
	return byLen, nil
}

// seriesOf averages the seeds' heads, head by head and over all heads.
func seriesOf(seeds [][]Head) (Series, error) {
	sa := Series{Seeds: len(seeds)}
	var all [][]Bin
	for _, heads := range seeds {
		if len(heads) != len(seeds[0]) {
			return sa, errors.New("seeds have different numbers of heads")
		}
		all = append(all, meanOverHeads(heads))
	}
	var err error
	if sa.All, err = statsOf(all); err != nil {
		return sa, err
	}
	for k, hd := range seeds[0] {
		var bins [][]Bin
		for _, heads := range seeds {
			bins = append(bins, heads[k].Bins)
		}
		st, err := statsOf(bins)
		if err != nil {
			return sa, err
		}
		sa.Heads = append(sa.Heads, HeadStat{Layer: hd.Layer, Head: hd.Head, Bins: st})
	}
	return sa, nil
}

// meanOverHeads is the mean of every head's bins.
func meanOverHeads(heads []Head) []Bin {
	out := slices.Clone(heads[0].Bins)
	for k := range out {
		out[k].Entropy, out[k].Far = 0, 0
		for _, hd := range heads {
			out[k].Entropy += hd.Bins[k].Entropy / float64(len(heads))
			out[k].Far += hd.Bins[k].Far / float64(len(heads))
		}
	}
	return out
}

// statsOf gives each bin's mean and standard deviation over seeds.
func statsOf(seeds [][]Bin) ([]Stat, error) {
	var out []Stat
	for k, b := range seeds[0] {
		var ent, far []float64
		for _, bins := range seeds {
			// Every seed has the same bins at a length; a run that has not is a mistake.
			if len(bins) != len(seeds[0]) || bins[k].From != b.From || bins[k].To != b.To {
				return nil, errors.New("seeds have different query bins")
			}
			ent, far = append(ent, bins[k].Entropy), append(far, bins[k].Far)
		}
		st := Stat{From: b.From, To: b.To, Uniform: b.Uniform}
		st.EntropyMean, st.EntropyStd = measure.MeanStd(ent)
		st.FarMean, st.FarStd = measure.MeanStd(far)
		out = append(out, st)
	}
	return out, nil
}

// section is the comparison's attention: every label's at every length.
type section struct {
	rep *measure.Report
	sas []Series
}

// Write writes every label's attention by length, head and bin as CSV and JSON, and the two
// figures.
func (s section) Write(dir string) error {
	rep := s.rep
	protocol := rep.Runs[0].Config().Eval.Protocol()
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.Write([]string{"label", "position", "length", "ratio", "layer", "head", "from", "to", "seeds", "entropy_mean", "entropy_std", "uniform_entropy", "far_mass_mean", "far_mass_std", "protocol"})
	for _, sa := range s.sas {
		row := func(layer, head string, st Stat) {
			w.Write([]string{sa.Label, sa.Position, strconv.Itoa(sa.Length), measure.CSVFloat(float64(sa.Length) / float64(rep.TrainLen)), layer, head,
				strconv.Itoa(st.From), strconv.Itoa(st.To), strconv.Itoa(sa.Seeds), measure.CSVFloat(st.EntropyMean), measure.CSVFloat(st.EntropyStd),
				measure.CSVFloat(st.Uniform), measure.CSVFloat(st.FarMean), measure.CSVFloat(st.FarStd), protocol})
		}
		for _, st := range sa.All {
			row("all", "all", st)
		}
		for _, hd := range sa.Heads {
			for _, st := range hd.Bins {
				row(strconv.Itoa(hd.Layer), strconv.Itoa(hd.Head), st)
			}
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
	}{rep.TrainLen, protocol, s.sas}); err != nil {
		return err
	}
	if err := s.figure(dir, true); err != nil {
		return err
	}
	return s.figure(dir, false)
}

// longest keeps each label's attention at its longest length, by series of the report.
func (s section) longest() []*Series {
	out := make([]*Series, len(s.rep.Series))
	for i, series := range s.rep.Series {
		for k := range s.sas {
			if s.sas[k].Label == series.Label {
				out[i] = &s.sas[k] // lengths come in increasing order
			}
		}
	}
	return out
}

// figure draws, for every label at its longest length, the entropy (or the far share) by
// octave of query positions, mean over layers and heads, ± std over seeds, a panel per family;
// the entropy figure draws uniform attention's beside.
func (s section) figure(dir string, entropy bool) error {
	rep := s.rep
	lines := make([]measure.Line, len(rep.Series))
	longest, guide := 0, measure.Line{Label: "uniform attention"}
	for i, sa := range s.longest() {
		if sa == nil {
			continue
		}
		lines[i].Label = sa.Label
		for _, st := range sa.All {
			y, e := st.FarMean, st.FarStd
			if entropy {
				y, e = st.EntropyMean, st.EntropyStd
			}
			lines[i].XYs = append(lines[i].XYs, plotter.XY{X: binMiddle(st.From, st.To), Y: y})
			lines[i].Low, lines[i].High = append(lines[i].Low, e), append(lines[i].High, e)
		}
		if sa.Length > longest {
			longest, guide.XYs = sa.Length, nil
			for _, st := range sa.All {
				guide.XYs = append(guide.XYs, plotter.XY{X: binMiddle(st.From, st.To), Y: st.Uniform})
			}
		}
	}
	f := measure.Figure{XLabel: "tokens seen (query position in the window + 1, log scale)", Lines: lines}
	png, svg := FarPNG, FarSVG
	what := fmt.Sprintf("share of attention on keys at least %d back", rep.TrainLen)
	if entropy {
		png, svg, what, f.Guide = EntropyPNG, EntropySVG, "attention entropy (nats)", guide
	}
	f.YLabel = what
	f.Title = fmt.Sprintf("%s: %s at length %d, by octave of query positions, mean over layers and heads, ± std over %d seeds",
		rep.Name, what, longest, len(rep.Seeds))
	return rep.WriteFigure(filepath.Join(dir, png), filepath.Join(dir, svg), f)
}

// binMiddle is a bin's x in a figure: its geometric middle in tokens seen, position+1.
func binMiddle(from, to int) float64 { return math.Sqrt(float64(from+1) * float64(to+1)) }

// Markdown writes the figures, what the numbers are, a sentence on what they show, and tables
// of the window's last octave of queries by length.
func (s section) Markdown(w io.Writer) {
	rep := s.rep
	p := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	p("\n## Attention\n\n![attention entropy by query position](%s)\n\n![share of attention on far keys by query position](%s)\n\n", EntropyPNG, FarPNG)
	p("For every layer and head, at every evaluation length: the entropy of each query's attention over the keys up to it, in nats (uniform attention over i+1 keys has log(i+1)), and the share of it on keys at least the training length (%d) back, distances training never showed. ", rep.TrainLen)
	p("Each is averaged over the windows and over the queries of each octave of positions (0, 1, 2–3, 4–7, …), then here over layers and heads; every layer and head, with the standard deviation over seeds, is in `%s`. ", ComparisonCSV)
	p("The figures show each run's longest length, %s.\n\n", rep.PanelsNote())
	if finding := s.finding(); finding != "" {
		p("%s\n\n", finding)
	}
	p("Entropy in the window's last octave of queries (nats), mean over layers and heads, ± std over seeds:\n\n")
	s.table(w, false, func(st Stat) string { return fmt.Sprintf("%.3f ± %.3f", st.EntropyMean, st.EntropyStd) })
	p("\nShare of attention on keys at least %d back, in the same queries:\n\n", rep.TrainLen)
	s.table(w, true, func(st Stat) string { return measure.Percent(st.FarMean) + " ± " + measure.Percent(st.FarStd) })
}

// table writes a row per label and a column per length (past the training length only, with
// far), each cell from the last octave's statistic; the entropy table starts with uniform
// attention's row.
func (s section) table(w io.Writer, far bool, cell func(Stat) string) {
	rep := s.rep
	var lengths []int
	for _, n := range rep.Lengths {
		if !far || n > rep.TrainLen {
			lengths = append(lengths, n)
		}
	}
	fmt.Fprintf(w, "| run | position |")
	for _, n := range lengths {
		fmt.Fprintf(w, " %d (%gx) |", n, float64(n)/float64(rep.TrainLen))
	}
	fmt.Fprintf(w, "\n|---|---|%s\n", strings.Repeat("---:|", len(lengths)))
	if !far {
		fmt.Fprintf(w, "| uniform attention | |")
		for _, n := range lengths {
			fmt.Fprintf(w, " %.3f |", uniformLastOctave(n))
		}
		fmt.Fprintf(w, "\n")
	}
	for _, series := range rep.Series {
		fmt.Fprintf(w, "| %s | %s |", series.Label, series.Position)
		for _, n := range lengths {
			if st, ok := s.lastOctave(series.Label, n); ok {
				fmt.Fprintf(w, " %s |", cell(st))
			} else {
				fmt.Fprintf(w, " n/a |")
			}
		}
		fmt.Fprintf(w, "\n")
	}
}

// lastOctave is a label's statistic in the last octave of queries at length n, over all heads.
func (s section) lastOctave(label string, n int) (Stat, bool) {
	for _, sa := range s.sas {
		if sa.Label == label && sa.Length == n && len(sa.All) > 0 {
			return sa.All[len(sa.All)-1], true
		}
	}
	return Stat{}, false
}

// uniformLastOctave is the entropy of uniform attention in the last octave of queries of a
// window of n tokens, as octaveBins bins it.
func uniformLastOctave(n int) float64 {
	from := 0
	for from < n {
		to := min(max(from, 2*from-1), n-1)
		if to == n-1 {
			break
		}
		from = to + 1
	}
	var sum float64
	for i := from; i < n; i++ {
		sum += math.Log(float64(i + 1))
	}
	return sum / float64(n-from)
}
