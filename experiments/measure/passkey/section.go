package passkey

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"extrapolate/data"
	"extrapolate/experiments/measure"
	"extrapolate/experiments/plot"
)

// Series is one label's passkey retrieval, over its seeds.
type Series struct {
	Label    string `json:"label"`
	Position string `json:"position"`
	// Cells are every seed's cells; ByLength the accuracy at each length.
	Cells    []Cell `json:"-"`
	ByLength []Stat `json:"by_length"`
}

// Stat is passkey retrieval at one length over seeds: each seed's mean over depths, then
// the mean and standard deviation of those over seeds.
type Stat struct {
	Length int     `json:"length"`
	Seeds  int     `json:"seeds"` // 0: not applicable
	Mean   float64 `json:"accuracy_mean"`
	Std    float64 `json:"accuracy_std"`
	// Digits is the mean share of single digits right.
	Digits float64 `json:"digits_mean"`
}

// heatMapName is a label's heat map in a comparison folder.
func heatMapName(label, ext string) string { return "passkey_" + label + "." + ext }

// SeriesOf gathers passkey retrieval by label, for labels whose runs have it.
func SeriesOf(rep *measure.Report) []Series {
	var out []Series
	for _, s := range rep.Series {
		sp := Series{Label: s.Label, Position: s.Position}
		perSeed := map[int][]float64{} // length → each seed's mean over depths
		digits := map[int][]float64{}
		for _, r := range rep.Runs {
			if r.Label != s.Label || !r.Result.OK() {
				continue
			}
			cells := Of(r.Result)
			if len(cells) == 0 {
				continue
			}
			sp.Cells = append(sp.Cells, cells...)
			g := gridOf(cells)
			for i, n := range g.lengths {
				if m := rowMean(g.acc[i]); m >= 0 {
					perSeed[n] = append(perSeed[n], m)
				}
			}
			for _, c := range cells {
				if c.Applicable {
					digits[c.Length] = append(digits[c.Length], c.Digits)
				}
			}
		}
		if len(sp.Cells) == 0 {
			continue
		}
		for _, n := range rep.Lengths {
			st := Stat{Length: n, Seeds: len(perSeed[n])}
			if st.Seeds > 0 {
				st.Mean, st.Std = measure.MeanStd(perSeed[n])
				st.Digits, _ = measure.MeanStd(digits[n])
			}
			sp.ByLength = append(sp.ByLength, st)
		}
		out = append(out, sp)
	}
	return out
}

// rowMean is the mean of the applicable (non-negative) values, or -1 when there are none.
func rowMean(x []float64) float64 {
	var sum float64
	n := 0
	for _, v := range x {
		if v >= 0 {
			sum += v
			n++
		}
	}
	if n == 0 {
		return -1
	}
	return sum / float64(n)
}

// section is the comparison's passkey retrieval, by label.
type section struct {
	rep *measure.Report
	sps []Series
}

// Write writes the comparison's passkey retrieval: every run's cells and each label's means as
// CSV and JSON, a heat map per label and accuracy against length.
func (s section) Write(dir string) error {
	rep, sps := s.rep, s.sps
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.Write([]string{"label", "position", "seed", "length", "ratio", "depth", "docs", "correct", "accuracy", "digits_right", "applicable", "chance"})
	for _, r := range rep.Runs {
		if !r.Result.OK() {
			continue
		}
		for _, c := range Of(r.Result) {
			w.Write([]string{r.Label, measure.PositionOf(r.Config()), strconv.FormatUint(r.Seed, 10), strconv.Itoa(c.Length), measure.CSVFloat(float64(c.Length) / float64(rep.TrainLen)),
				measure.CSVFloat(c.Depth), strconv.Itoa(c.Docs), strconv.Itoa(c.Correct), measure.CSVFloat(c.Accuracy), measure.CSVFloat(c.Digits), strconv.FormatBool(c.Applicable), measure.CSVFloat(data.PasskeyChance)})
		}
	}
	var lines []plot.Series
	fineTuned := map[int][]string{} // a fine-tuning length → the labels fine-tuned at it
	for _, sp := range sps {
		l := plot.Series{Label: sp.Label, Style: rep.StyleOf(sp.Label)}
		for _, st := range sp.ByLength {
			if st.Seeds == 0 {
				continue
			}
			ratio := measure.CSVFloat(float64(st.Length) / float64(rep.TrainLen))
			w.Write([]string{sp.Label, sp.Position, "mean", strconv.Itoa(st.Length), ratio, "all", "", "", measure.CSVFloat(st.Mean), measure.CSVFloat(st.Digits), "true", measure.CSVFloat(data.PasskeyChance)})
			w.Write([]string{sp.Label, sp.Position, "std", strconv.Itoa(st.Length), ratio, "all", "", "", measure.CSVFloat(st.Std), "", "true", measure.CSVFloat(data.PasskeyChance)})
			l.XYs = append(l.XYs, struct{ X, Y float64 }{float64(st.Length), st.Mean})
			// The bars span the std over seeds, cut at 0 and 1.
			l.Low, l.High = append(l.Low, min(st.Std, st.Mean)), append(l.High, min(st.Std, 1-st.Mean))
		}
		ft := fineTuneLen(rep, sp.Label)
		if ft > 0 {
			fineTuned[ft] = append(fineTuned[ft], sp.Label)
			l.Label += fmt.Sprintf(" (fine-tuned at %d)", ft)
		}
		if _, ok := sp.notLearned(rep.TrainLen); ok {
			l.Label += " (not learned at 1x)"
		}
		lines = append(lines, l)
		title := fmt.Sprintf("%s: passkey retrieval, mean over seeds (chance %s)", sp.Label, measure.Percent(data.PasskeyChance))
		if ft > 0 {
			title += fmt.Sprintf("; fine-tuned at %d", ft)
		}
		if err := gridOf(sp.Cells).draw(filepath.Join(dir, heatMapName(sp.Label, "png")), filepath.Join(dir, heatMapName(sp.Label, "svg")), title, rep.TrainLen, ft); err != nil {
			return err
		}
	}
	w.Flush()
	if err := measure.WriteFile(filepath.Join(dir, ComparisonCSV), b.Bytes()); err != nil {
		return err
	}
	if err := measure.WriteJSON(filepath.Join(dir, ComparisonJSON), struct {
		TrainLen int      `json:"train_len"`
		Chance   float64  `json:"chance"`
		Series   []Series `json:"series"`
	}{rep.TrainLen, data.PasskeyChance, sps}); err != nil {
		return err
	}
	title := fmt.Sprintf("%s: passkey accuracy, mean over depths and %d seeds ± std (series offset a little in x)", rep.Name, len(rep.Seeds))
	var marks []plot.Mark
	for _, n := range slices.Sorted(maps.Keys(fineTuned)) {
		marks = append(marks, plot.Mark{X: float64(n), Label: fmt.Sprintf("fine-tuning length %d (%d series)", n, len(fineTuned[n]))})
	}
	return plot.Accuracy(filepath.Join(dir, ComparisonPNG), filepath.Join(dir, ComparisonSVG), title, rep.TrainLen, lines, marks...)
}

// fineTuneLen is the length a label's runs were fine-tuned at (train.finetune.seq_len), 0 when
// they were not.
func fineTuneLen(rep *measure.Report, label string) int {
	for _, r := range rep.Runs {
		if r.Label == label {
			if f := r.Config().Train.Finetune; f != nil {
				return f.SeqLen
			}
			return 0
		}
	}
	return 0
}

// Markdown is the report's passkey section.
func (s section) Markdown(b io.Writer) {
	rep, sps := s.rep, s.sps
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	p("\n## Passkey retrieval\n\n![passkey accuracy against length](%s)\n\n", ComparisonPNG)
	p("A document is validation text with the needle `key@NNNNN.` after a fraction (the depth) of the filler and the question `key@` at the end; an answer counts when the model's greedy continuation is all five digits of the key (chance: %s). Keys are held out from training; %d documents per length and depth, depths %s.\n\n",
		measure.Percent(data.PasskeyChance), Docs, depthList())
	// table writes a row per label and a column per length, each cell from its statistic.
	table := func(head string, cell func(Stat) string) {
		p("| %s | position |", head)
		for _, n := range rep.Lengths {
			p(" %d (%gx) |", n, float64(n)/float64(rep.TrainLen))
		}
		p("\n|---|---|%s\n", strings.Repeat("---:|", len(rep.Lengths)))
		for _, sp := range sps {
			p("| %s | %s |", sp.Label, sp.Position)
			for _, st := range sp.ByLength {
				if st.Seeds == 0 {
					p(" n/a |")
					continue
				}
				p(" %s |", cell(st))
			}
			p("\n")
		}
	}
	table("accuracy, mean ± std over seeds", func(st Stat) string { return measure.Percent(st.Mean) + " ± " + measure.Percent(st.Std) })
	var unlearned []string
	for _, sp := range sps {
		if acc, ok := sp.notLearned(rep.TrainLen); ok {
			unlearned = append(unlearned, fmt.Sprintf("%s (%s)", sp.Label, measure.Percent(acc)))
		}
	}
	if len(unlearned) > 0 {
		p("\nNot learned: %s retrieve less than %s of the keys at the training length, so their scores past it say nothing of extrapolation; the figure marks them.\n",
			strings.Join(unlearned, ", "), measure.Percent(Learned))
	}
	effectiveTable(b, rep, sps)
	p("\nShare of single digits right (each given the true digits before it; chance 10%%), mean over depths and seeds:\n\n")
	table("digits right", func(st Stat) string { return measure.Percent(st.Digits) })
	p("\nBy depth (rows) and length (columns), mean over seeds:\n")
	for _, sp := range sps {
		p("\n**%s** ([heat map](%s))\n\n```\n%s```\n", sp.Label, heatMapName(sp.Label, "png"), textTable(sp.Cells, rep.TrainLen))
	}
}

func depthList() string {
	var s []string
	for _, d := range Depths {
		s = append(s, fmt.Sprintf("%g%%", 100*d))
	}
	return strings.Join(s, ", ")
}

// notLearned reports whether the series retrieves less than Learned at the training length,
// with its accuracy there.
func (sp Series) notLearned(trainLen int) (float64, bool) {
	for _, st := range sp.ByLength {
		if st.Length == trainLen && st.Seeds > 0 {
			return st.Mean, st.Mean < Learned
		}
	}
	return 0, false
}
