package measure

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"extrapolate/data"
	"extrapolate/experiments/plot"
)

// SeriesPasskey is one label's passkey retrieval, over its seeds.
type SeriesPasskey struct {
	Label    string `json:"label"`
	Position string `json:"position"`
	// Cells are every seed's cells; ByLength the accuracy at each length.
	Cells    []PasskeyResult `json:"-"`
	ByLength []AccuracyStat  `json:"by_length"`
}

// AccuracyStat is passkey retrieval at one length over seeds: each seed's mean over depths, then
// the mean and standard deviation of those over seeds.
type AccuracyStat struct {
	Length int     `json:"length"`
	Seeds  int     `json:"seeds"` // 0: not applicable
	Mean   float64 `json:"accuracy_mean"`
	Std    float64 `json:"accuracy_std"`
	// Digits is the mean share of single digits right.
	Digits float64 `json:"digits_mean"`
}

// passkeyFileName is a label's heat map in a comparison folder.
func passkeyFileName(label, ext string) string { return "passkey_" + label + "." + ext }

// PasskeyPlotPNG and PasskeyPlotSVG are a comparison's accuracy against length.
const (
	PasskeyPlotPNG = "passkey_vs_len.png"
	PasskeyPlotSVG = "passkey_vs_len.svg"
)

// Passkey gathers passkey retrieval by label, for labels whose runs have it.
func (rep *Report) Passkey() []SeriesPasskey {
	var out []SeriesPasskey
	for _, s := range rep.Series {
		sp := SeriesPasskey{Label: s.Label, Position: s.Position}
		perSeed := map[int][]float64{} // length → each seed's mean over depths
		digits := map[int][]float64{}
		for _, r := range rep.Runs {
			if r.Label != s.Label || r.Result.Status != "ok" {
				continue
			}
			cells := PasskeyOf(r.Result)
			if len(cells) == 0 {
				continue
			}
			sp.Cells = append(sp.Cells, cells...)
			g := passkeyGrid(cells)
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
			st := AccuracyStat{Length: n, Seeds: len(perSeed[n])}
			if st.Seeds > 0 {
				st.Mean, st.Std = MeanStd(perSeed[n])
				st.Digits, _ = MeanStd(digits[n])
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

// writePasskey writes the comparison's passkey retrieval: every run's cells and each label's
// means as CSV and JSON, a heat map per label and accuracy against length.
func (rep *Report) writePasskey(dir string, sps []SeriesPasskey) error {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.Write([]string{"label", "position", "seed", "length", "ratio", "depth", "docs", "correct", "accuracy", "digits_right", "applicable", "chance"})
	for _, r := range rep.Runs {
		if r.Result.Status != "ok" {
			continue
		}
		for _, c := range PasskeyOf(r.Result) {
			w.Write([]string{r.Label, PositionOf(r.Config), strconv.FormatUint(r.Seed, 10), strconv.Itoa(c.Length), CSVFloat(float64(c.Length) / float64(rep.TrainLen)),
				CSVFloat(c.Depth), strconv.Itoa(c.Docs), strconv.Itoa(c.Correct), CSVFloat(c.Accuracy), CSVFloat(c.Digits), strconv.FormatBool(c.Applicable), CSVFloat(data.PasskeyChance)})
		}
	}
	var lines []plot.Series
	for _, sp := range sps {
		l := plot.Series{Label: sp.Label, Style: rep.StyleOf(sp.Label)}
		for _, st := range sp.ByLength {
			if st.Seeds == 0 {
				continue
			}
			ratio := CSVFloat(float64(st.Length) / float64(rep.TrainLen))
			w.Write([]string{sp.Label, sp.Position, "mean", strconv.Itoa(st.Length), ratio, "all", "", "", CSVFloat(st.Mean), CSVFloat(st.Digits), "true", CSVFloat(data.PasskeyChance)})
			w.Write([]string{sp.Label, sp.Position, "std", strconv.Itoa(st.Length), ratio, "all", "", "", CSVFloat(st.Std), "", "true", CSVFloat(data.PasskeyChance)})
			l.XYs = append(l.XYs, struct{ X, Y float64 }{float64(st.Length), st.Mean})
		}
		lines = append(lines, l)
		title := fmt.Sprintf("%s: passkey retrieval, mean over seeds (chance %s)", sp.Label, Percent(data.PasskeyChance))
		if err := passkeyGrid(sp.Cells).draw(filepath.Join(dir, passkeyFileName(sp.Label, "png")), filepath.Join(dir, passkeyFileName(sp.Label, "svg")), title, rep.TrainLen); err != nil {
			return err
		}
	}
	w.Flush()
	if err := WriteFile(filepath.Join(dir, ComparisonPasskeyCSV), b.Bytes()); err != nil {
		return err
	}
	if err := WriteJSON(filepath.Join(dir, ComparisonPasskeyJSON), struct {
		TrainLen int             `json:"train_len"`
		Chance   float64         `json:"chance"`
		Series   []SeriesPasskey `json:"series"`
	}{rep.TrainLen, data.PasskeyChance, sps}); err != nil {
		return err
	}
	title := fmt.Sprintf("%s: passkey accuracy, mean over depths and %d seeds", rep.Name, len(rep.Seeds))
	return plot.Accuracy(filepath.Join(dir, PasskeyPlotPNG), filepath.Join(dir, PasskeyPlotSVG), title, rep.TrainLen, lines)
}

// passkeyMarkdown is the report's passkey section, when the runs have passkey results.
func (rep *Report) passkeyMarkdown(b io.Writer, sps []SeriesPasskey) {
	p := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	p("\n## Passkey retrieval\n\n![passkey accuracy against length](%s)\n\n", PasskeyPlotPNG)
	p("A document is validation text with the needle `key@NNNNN.` after a fraction (the depth) of the filler and the question `key@` at the end; an answer counts when the model's greedy continuation is all five digits of the key (chance: %s). Keys are held out from training; %d documents per length and depth, depths %s.\n\n",
		Percent(data.PasskeyChance), PasskeyDocs, depthList())
	// table writes a row per label and a column per length, each cell from its statistic.
	table := func(head string, cell func(AccuracyStat) string) {
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
	table("accuracy, mean ± std over seeds", func(st AccuracyStat) string { return Percent(st.Mean) + " ± " + Percent(st.Std) })
	p("\nShare of single digits right (each given the true digits before it; chance 10%%), mean over depths and seeds:\n\n")
	table("digits right", func(st AccuracyStat) string { return Percent(st.Digits) })
	p("\nBy depth (rows) and length (columns), mean over seeds:\n")
	for _, sp := range sps {
		p("\n**%s** ([heat map](%s))\n\n```\n%s```\n", sp.Label, passkeyFileName(sp.Label, "png"), passkeyTable(sp.Cells, rep.TrainLen))
	}
}

func depthList() string {
	var s []string
	for _, d := range PasskeyDepths {
		s = append(s, fmt.Sprintf("%g%%", 100*d))
	}
	return strings.Join(s, ", ")
}
