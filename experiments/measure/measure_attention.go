package measure

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot/plotter"

	"extrapolate/data"
	"extrapolate/model"
	"extrapolate/model/nn"
)

// Files of attention diagnostics, in a run folder and in a comparison folder.
const (
	AttentionCSV            = "attention.csv"
	AttentionJSON           = "attention.json"
	ComparisonAttentionCSV  = "attention_by_run.csv"
	ComparisonAttentionJSON = "attention_by_run.json"
	ComparisonEntropyPNG    = "attention_entropy_by_run.png"
	ComparisonEntropySVG    = "attention_entropy_by_run.svg"
	ComparisonFarPNG        = "attention_far_by_run.png"
	ComparisonFarSVG        = "attention_far_by_run.svg"
)

// attentionMeasure is what each head's attention looks like, by query position, at every
// evaluation length: the entropy of its distribution over the keys, and its share on keys
// farther back than training ever showed. These are the quantities the log-n and
// Scalable-Softmax papers argue from: attention that fades over more keys than training showed.
// Its numbers come from the probabilities the attention op computes in the protocol's pass
// (model.Options.AttentionStats), which it does not change. A run takes it when eval.measures
// names it.
type attentionMeasure struct{}

func (attentionMeasure) Name() string    { return "attention" }
func (attentionMeasure) Files() []string { return []string{AttentionCSV, AttentionJSON} }

func (attentionMeasure) Start(*Evaluation) (Recorder, error) { return &attentionRun{}, nil }

// AttentionBin is one head's attention at the queries From to To of the window, an octave of
// positions, mean over those queries and over the windows.
type AttentionBin struct {
	From int `json:"from"`
	To   int `json:"to"`
	// Entropy is the entropy of the attention over the keys up to the query, in nats; Uniform
	// is that of uniform attention there, the mean of log(i+1) over the bin's queries i.
	Entropy float64 `json:"entropy"`
	Uniform float64 `json:"uniform_entropy"`
	// Far is the share of the attention on keys at least the training length back.
	Far float64 `json:"far_mass"`
}

// AttentionHead is one head's attention by octave of query positions.
type AttentionHead struct {
	Layer int            `json:"layer"`
	Head  int            `json:"head"`
	Bins  []AttentionBin `json:"bins"`
}

// AttentionLength is a run's attention at one evaluation length.
type AttentionLength struct {
	Length     int    `json:"length"`
	Applicable bool   `json:"applicable"`
	Reason     string `json:"reason,omitempty"`
	// Windows is how many windows the means are over; with sliding windows (eval.stride) the
	// copies of the last window that fill the last batch count too.
	Windows int             `json:"windows"`
	Heads   []AttentionHead `json:"heads"`
}

// attentionFile is a run's attention.json.
type attentionFile struct {
	Name     string            `json:"name"`
	Scheme   string            `json:"scheme"`
	Scaling  string            `json:"scaling,omitempty"`
	Seed     uint64            `json:"seed"`
	TrainLen int               `json:"train_len"`
	Protocol string            `json:"protocol"`
	Lengths  []AttentionLength `json:"lengths"`
}

// attentionRun measures one run.
type attentionRun struct {
	lengths []AttentionLength
	stats   []*nn.AttentionStats // the length under way's, summed over its batches so far
}

func (r *attentionRun) GraphOptions(o *model.Options) { o.AttentionStats = true }

func (r *attentionRun) Length(int) LengthObserver { r.stats = nil; return r }

func (r *attentionRun) Batch(g *model.Graph, _ []data.Window, _ []float64) { r.stats = g.Stats }

// End bins the length's statistics; a length not scored, or not finite, has none.
func (r *attentionRun) End(l PassLength) {
	al := AttentionLength{Length: l.Length, Reason: l.Reason}
	if l.Sum != nil && r.stats != nil {
		al.Applicable = true
		al.Windows, al.Heads = attentionHeads(r.stats, l.Length)
		if reason := nonFiniteAttention(al.Heads); reason != "" {
			al.Applicable, al.Reason, al.Heads = false, reason, nil
		}
	}
	r.lengths = append(r.lengths, al)
}

// attentionHeads bins every layer's statistics, head by head, for windows of n tokens.
func attentionHeads(stats []*nn.AttentionStats, n int) (windows int, heads []AttentionHead) {
	for l, st := range stats {
		windows = st.Sequences
		for h := range len(st.Entropy) / n {
			heads = append(heads, AttentionHead{Layer: l, Head: h, Bins: attentionBins(st, h, n)})
		}
	}
	return windows, heads
}

// attentionBins averages head h's statistics over the windows, then over the queries of each
// octave of positions, {0}, {1}, {2, 3}, {4, ..., 7}, ...: the bins of loss by position's
// figure, each as wide on a log axis.
func attentionBins(st *nn.AttentionStats, h, n int) []AttentionBin {
	var out []AttentionBin
	w := float64(st.Sequences)
	for from := 0; from < n; {
		to := min(max(from, 2*from-1), n-1)
		b := AttentionBin{From: from, To: to}
		for i := from; i <= to; i++ {
			b.Entropy += st.Entropy[h*n+i] / w
			b.Far += st.FarMass[h*n+i] / w
			b.Uniform += math.Log(float64(i + 1))
		}
		k := float64(to - from + 1)
		b.Entropy, b.Far, b.Uniform = b.Entropy/k, b.Far/k, b.Uniform/k
		out = append(out, b)
		from = to + 1
	}
	return out
}

// nonFiniteAttention says which statistic is not a finite number, or "" when all are.
func nonFiniteAttention(heads []AttentionHead) string {
	for _, hd := range heads {
		for _, b := range hd.Bins {
			if math.IsNaN(b.Entropy+b.Far) || math.IsInf(b.Entropy+b.Far, 0) {
				return fmt.Sprintf("non-finite attention statistics in layer %d, head %d, queries %d to %d", hd.Layer, hd.Head, b.From, b.To)
			}
		}
	}
	return ""
}

// Record writes the run's attention as CSV and JSON.
func (r *attentionRun) Record(dir string, res *Result) error {
	if len(r.lengths) == 0 {
		return nil
	}
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.Write([]string{"length", "ratio", "layer", "head", "from", "to", "windows", "entropy", "uniform_entropy", "far_mass", "protocol"})
	for _, al := range r.lengths {
		for _, hd := range al.Heads {
			for _, bin := range hd.Bins {
				w.Write([]string{strconv.Itoa(al.Length), CSVFloat(float64(al.Length) / float64(res.TrainLen)), strconv.Itoa(hd.Layer), strconv.Itoa(hd.Head),
					strconv.Itoa(bin.From), strconv.Itoa(bin.To), strconv.Itoa(al.Windows), CSVFloat(bin.Entropy), CSVFloat(bin.Uniform), CSVFloat(bin.Far), res.Protocol})
			}
		}
	}
	w.Flush()
	if err := WriteFile(filepath.Join(dir, AttentionCSV), b.Bytes()); err != nil {
		return err
	}
	return WriteJSON(filepath.Join(dir, AttentionJSON), attentionFile{Name: res.Name, Scheme: res.Scheme, Scaling: res.Scaling, Seed: res.Seed,
		TrainLen: res.TrainLen, Protocol: res.Protocol, Lengths: r.lengths})
}

// readAttention reads a finished run's attention, checked against the run (attentionFile.check),
// when its config asks for it; nil for a run that was not asked to take it.
func readAttention(r RunResult) ([]AttentionLength, error) {
	if !slices.Contains(r.Config.Eval.Measures, attentionMeasure{}.Name()) {
		return nil, nil
	}
	path := filepath.Join(r.Dir, AttentionJSON)
	b, err := ReadRunFile(path)
	if err != nil {
		return nil, err
	}
	var f attentionFile
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
func (f *attentionFile) check(r RunResult) error {
	if err := SameRun(r, f.Name, f.Seed, f.TrainLen, f.Protocol); err != nil {
		return err
	}
	got := make([]int, len(f.Lengths))
	for i, al := range f.Lengths {
		got[i] = al.Length
	}
	if err := SameLengths("lengths", got, r.Config.Eval.Lengths); err != nil {
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
			err = checkHeads(al, r.Config.Model.Layers, r.Config.Model.Heads)
		}
		if err != nil {
			return fmt.Errorf("length %d: %w", al.Length, err)
		}
	}
	return nil
}

// checkHeads checks one length's heads: layers × heads of them, layer by layer, over some
// windows, each in the octave bins of attentionBins.
func checkHeads(al AttentionLength, layers, heads int) error {
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
		if err := checkAttentionBins(hd.Bins, al.Length); err != nil {
			return fmt.Errorf("layer %d head %d: %w", hd.Layer, hd.Head, err)
		}
	}
	return nil
}

// checkAttentionBins checks one head's bins: the octaves of queries 0, 1, 2–3, ... up to n-1,
// with finite entropies and shares of at least 0.
func checkAttentionBins(bins []AttentionBin, n int) error {
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

// AttentionStat is a bin's attention over seeds: the mean and standard deviation of each
// seed's value.
type AttentionStat struct {
	From        int     `json:"from"`
	To          int     `json:"to"`
	Uniform     float64 `json:"uniform_entropy"`
	EntropyMean float64 `json:"entropy_mean"`
	EntropyStd  float64 `json:"entropy_std"`
	FarMean     float64 `json:"far_mass_mean"`
	FarStd      float64 `json:"far_mass_std"`
}

// AttentionHeadStat is one head's attention over seeds.
type AttentionHeadStat struct {
	Layer int             `json:"layer"`
	Head  int             `json:"head"`
	Bins  []AttentionStat `json:"bins"`
}

// SeriesAttention is one label's attention at one length, over its seeds.
type SeriesAttention struct {
	Label    string `json:"label"`
	Position string `json:"position"`
	Length   int    `json:"length"`
	Seeds    int    `json:"seeds"`
	// All is the mean over layers and heads: each seed's, then over seeds.
	All   []AttentionStat     `json:"all"`
	Heads []AttentionHeadStat `json:"heads"`
}

// Section gathers every label's attention by length; a comparison none of whose runs has
// attention diagnostics has no section.
func (attentionMeasure) Section(rep *Report) (Section, error) {
	var sas []SeriesAttention
	for _, s := range rep.Series {
		byLen, err := rep.seedAttention(s.Label)
		if err != nil {
			return nil, err
		}
		for _, n := range rep.Lengths {
			if len(byLen[n]) == 0 {
				continue
			}
			sa, err := seriesAttention(byLen[n])
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
	return attentionSection{rep, sas}, nil
}

// seedAttention reads the attention of a label's ok runs: by length, each seed's heads.
func (rep *Report) seedAttention(label string) (map[int][][]AttentionHead, error) {
	byLen := map[int][][]AttentionHead{}
	for _, r := range rep.Runs {
		if r.Label != label || r.Result.Status != "ok" || r.Dir == "" {
			continue
		}
		als, err := readAttention(r)
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

// seriesAttention averages the seeds' heads, head by head and over all heads.
func seriesAttention(seeds [][]AttentionHead) (SeriesAttention, error) {
	sa := SeriesAttention{Seeds: len(seeds)}
	var all [][]AttentionBin
	for _, heads := range seeds {
		if len(heads) != len(seeds[0]) {
			return sa, errors.New("seeds have different numbers of heads")
		}
		all = append(all, meanOverHeads(heads))
	}
	var err error
	if sa.All, err = attentionStats(all); err != nil {
		return sa, err
	}
	for k, hd := range seeds[0] {
		var bins [][]AttentionBin
		for _, heads := range seeds {
			bins = append(bins, heads[k].Bins)
		}
		st, err := attentionStats(bins)
		if err != nil {
			return sa, err
		}
		sa.Heads = append(sa.Heads, AttentionHeadStat{Layer: hd.Layer, Head: hd.Head, Bins: st})
	}
	return sa, nil
}

// meanOverHeads is the mean of every head's bins.
func meanOverHeads(heads []AttentionHead) []AttentionBin {
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

// attentionStats gives each bin's mean and standard deviation over seeds.
func attentionStats(seeds [][]AttentionBin) ([]AttentionStat, error) {
	var out []AttentionStat
	for k, b := range seeds[0] {
		var ent, far []float64
		for _, bins := range seeds {
			// Every seed has the same bins at a length; a run that has not is a mistake.
			if len(bins) != len(seeds[0]) || bins[k].From != b.From || bins[k].To != b.To {
				return nil, errors.New("seeds have different query bins")
			}
			ent, far = append(ent, bins[k].Entropy), append(far, bins[k].Far)
		}
		st := AttentionStat{From: b.From, To: b.To, Uniform: b.Uniform}
		st.EntropyMean, st.EntropyStd = MeanStd(ent)
		st.FarMean, st.FarStd = MeanStd(far)
		out = append(out, st)
	}
	return out, nil
}

// attentionSection is the comparison's attention: every label's at every length.
type attentionSection struct {
	rep *Report
	sas []SeriesAttention
}

// Write writes every label's attention by length, head and bin as CSV and JSON, and the two
// figures.
func (s attentionSection) Write(dir string) error {
	rep := s.rep
	protocol := rep.Runs[0].Config.Eval.Protocol()
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.Write([]string{"label", "position", "length", "ratio", "layer", "head", "from", "to", "seeds", "entropy_mean", "entropy_std", "uniform_entropy", "far_mass_mean", "far_mass_std", "protocol"})
	for _, sa := range s.sas {
		row := func(layer, head string, st AttentionStat) {
			w.Write([]string{sa.Label, sa.Position, strconv.Itoa(sa.Length), CSVFloat(float64(sa.Length) / float64(rep.TrainLen)), layer, head,
				strconv.Itoa(st.From), strconv.Itoa(st.To), strconv.Itoa(sa.Seeds), CSVFloat(st.EntropyMean), CSVFloat(st.EntropyStd),
				CSVFloat(st.Uniform), CSVFloat(st.FarMean), CSVFloat(st.FarStd), protocol})
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
	if err := WriteFile(filepath.Join(dir, ComparisonAttentionCSV), b.Bytes()); err != nil {
		return err
	}
	if err := WriteJSON(filepath.Join(dir, ComparisonAttentionJSON), struct {
		TrainLen int               `json:"train_len"`
		Protocol string            `json:"protocol"`
		Series   []SeriesAttention `json:"series"`
	}{rep.TrainLen, protocol, s.sas}); err != nil {
		return err
	}
	if err := s.figure(dir, true); err != nil {
		return err
	}
	return s.figure(dir, false)
}

// longest keeps each label's attention at its longest length, by series of the report.
func (s attentionSection) longest() []*SeriesAttention {
	out := make([]*SeriesAttention, len(s.rep.Series))
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
func (s attentionSection) figure(dir string, entropy bool) error {
	rep := s.rep
	lines := make([]Line, len(rep.Series))
	longest, guide := 0, Line{Label: "uniform attention"}
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
	f := Figure{XLabel: "tokens seen (query position in the window + 1, log scale)", Lines: lines}
	png, svg := ComparisonFarPNG, ComparisonFarSVG
	what := fmt.Sprintf("share of attention on keys at least %d back", rep.TrainLen)
	if entropy {
		png, svg, what, f.Guide = ComparisonEntropyPNG, ComparisonEntropySVG, "attention entropy (nats)", guide
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
func (s attentionSection) Markdown(w io.Writer) {
	rep := s.rep
	p := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	p("\n## Attention\n\n![attention entropy by query position](%s)\n\n![share of attention on far keys by query position](%s)\n\n", ComparisonEntropyPNG, ComparisonFarPNG)
	p("For every layer and head, at every evaluation length: the entropy of each query's attention over the keys up to it, in nats (uniform attention over i+1 keys has log(i+1)), and the share of it on keys at least the training length (%d) back, distances training never showed. ", rep.TrainLen)
	p("Each is averaged over the windows and over the queries of each octave of positions (0, 1, 2–3, 4–7, …), then here over layers and heads; every layer and head, with the standard deviation over seeds, is in `%s`. ", ComparisonAttentionCSV)
	p("The figures show each run's longest length, %s.\n\n", rep.PanelsNote())
	if finding := s.finding(); finding != "" {
		p("%s\n\n", finding)
	}
	p("Entropy in the window's last octave of queries (nats), mean over layers and heads, ± std over seeds:\n\n")
	s.table(w, false, func(st AttentionStat) string { return fmt.Sprintf("%.3f ± %.3f", st.EntropyMean, st.EntropyStd) })
	p("\nShare of attention on keys at least %d back, in the same queries:\n\n", rep.TrainLen)
	s.table(w, true, func(st AttentionStat) string { return Percent(st.FarMean) + " ± " + Percent(st.FarStd) })
}

// table writes a row per label and a column per length (past the training length only, with
// far), each cell from the last octave's statistic; the entropy table starts with uniform
// attention's row.
func (s attentionSection) table(w io.Writer, far bool, cell func(AttentionStat) string) {
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
func (s attentionSection) lastOctave(label string, n int) (AttentionStat, bool) {
	for _, sa := range s.sas {
		if sa.Label == label && sa.Length == n && len(sa.All) > 0 {
			return sa.All[len(sa.All)-1], true
		}
	}
	return AttentionStat{}, false
}

// uniformLastOctave is the entropy of uniform attention in the last octave of queries of a
// window of n tokens, as attentionBins bins it.
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

// finding says, at the longest length every label's attention was scored at, where attention
// is flattest and sharpest in the window's last octave of queries, the range of its share on
// far keys, and how that share ranks with perplexity.
func (s attentionSection) finding() string {
	rep := s.rep
	n := rep.Lengths[len(rep.Lengths)-1]
	type row struct {
		label  string
		st     AttentionStat
		ppl    float64
		hasPPL bool
	}
	var rows []row
	for _, series := range rep.Series {
		st, ok := s.lastOctave(series.Label, n)
		if !ok {
			continue
		}
		r := row{label: series.Label, st: st}
		if ps, ok := rep.At(series, n/rep.TrainLen); ok && n%rep.TrainLen == 0 {
			r.ppl, r.hasPPL = ps.PPLMean, true
		}
		rows = append(rows, r)
	}
	if len(rows) < 2 {
		return ""
	}
	by := func(less func(a, b row) int) (row, row) {
		return slices.MinFunc(rows, less), slices.MaxFunc(rows, less)
	}
	sharp, flat := by(func(a, b row) int { return cmpFloat(a.st.EntropyMean, b.st.EntropyMean) })
	near, far := by(func(a, b row) int { return cmpFloat(a.st.FarMean, b.st.FarMean) })
	text := fmt.Sprintf("At %d tokens (%gx the training length), in the window's last octave of queries, attention is flattest in %s (%.2f nats, %s of uniform attention's %.2f) and sharpest in %s (%.2f nats); its share on keys at least %d back ranges from %s in %s to %s in %s.",
		n, float64(n)/float64(rep.TrainLen), flat.label, flat.st.EntropyMean, Percent(flat.st.EntropyMean/flat.st.Uniform), flat.st.Uniform,
		sharp.label, sharp.st.EntropyMean, rep.TrainLen, Percent(near.st.FarMean), near.label, Percent(far.st.FarMean), far.label)
	var shares, ppls []float64
	for _, r := range rows {
		if r.hasPPL {
			shares, ppls = append(shares, r.st.FarMean), append(ppls, r.ppl)
		}
	}
	if len(shares) >= 3 {
		text += fmt.Sprintf(" Over the %d runs scored there, the rank correlation (Spearman) of that share with perplexity is %.2f.", len(shares), spearman(shares, ppls))
	}
	return text
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// spearman is the rank correlation of x and y: the Pearson correlation of their ranks, ties
// given their mean rank.
func spearman(x, y []float64) float64 {
	rx, ry := ranks(x), ranks(y)
	mx, _ := MeanStd(rx)
	my, _ := MeanStd(ry)
	var sxy, sxx, syy float64
	for i := range rx {
		sxy += (rx[i] - mx) * (ry[i] - my)
		sxx += (rx[i] - mx) * (rx[i] - mx)
		syy += (ry[i] - my) * (ry[i] - my)
	}
	if sxx == 0 || syy == 0 {
		return math.NaN()
	}
	return sxy / math.Sqrt(sxx*syy)
}

// ranks gives each value its rank among x, from 1, ties their mean rank.
func ranks(x []float64) []float64 {
	idx := make([]int, len(x))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmpFloat(x[a], x[b]) })
	out := make([]float64, len(x))
	for i := 0; i < len(idx); {
		j := i
		for j+1 < len(idx) && x[idx[j+1]] == x[idx[i]] {
			j++
		}
		for k := i; k <= j; k++ {
			out[idx[k]] = float64(i+j)/2 + 1
		}
		i = j + 1
	}
	return out
}
