package schemeweights

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"extrapolate/experiments/measure"
)

// Section gathers the measured runs' weights; nil when no run has FIRE's or KERPLE's.
func (Measure) Section(rep *measure.Report) (measure.Section, error) {
	runs, err := measured(rep)
	if err != nil || !anyWeights(runs) {
		return nil, err
	}
	return section{rep: rep, runs: runs}, nil
}

// anyWeights reports whether some run has weights the measure records.
func anyWeights(runs []run) bool {
	for _, r := range runs {
		if len(r.w.FIRE) > 0 || len(r.w.KERPLE) > 0 {
			return true
		}
	}
	return false
}

type section struct {
	rep  *measure.Report
	runs []run
}

// Write writes every run's weights as CSV, a row a value.
func (s section) Write(dir string) error {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.Write(csvHeader)
	for _, r := range s.runs {
		for _, row := range r.rows() {
			w.Write(row)
		}
	}
	w.Flush()
	return measure.WriteFile(filepath.Join(dir, ComparisonCSV), b.Bytes())
}

// csvHeader heads the rows of runs' weights: length and head are empty where a value has none.
var csvHeader = []string{"label", "seed", "scheme", "train_len", "layer", "what", "length", "head", "value"}

// rows are the run's weights, a row a value, in csvHeader's columns.
func (r run) rows() [][]string {
	var out [][]string
	add := func(l int, what string, n, h int, v float64) {
		row := []string{r.label, strconv.FormatUint(r.seed, 10), r.w.Scheme, strconv.Itoa(r.w.TrainLen), strconv.Itoa(l), what, "", "", strconv.FormatFloat(v, 'g', 8, 64)}
		if n > 0 {
			row[6] = strconv.Itoa(n)
		}
		if h >= 0 {
			row[7] = strconv.Itoa(h)
		}
		out = append(out, row)
	}
	for l, f := range r.w.FIRE {
		add(l, "c", 0, -1, f.C)
		add(l, "m", 0, -1, f.M)
		add(l, "threshold", 0, -1, f.Threshold)
		add(l, "trained_input", 0, -1, f.TrainedInput)
		for _, far := range f.Far {
			add(l, "far_input", far.Length, -1, far.Input)
			for h, v := range far.Bias {
				add(l, "far_bias", far.Length, h, v)
			}
		}
	}
	for l, k := range r.w.KERPLE {
		for h := range k.R1 {
			add(l, "r1", 0, h, k.R1[h])
			add(l, "r2", 0, h, k.R2[h])
		}
	}
	return out
}

// Markdown writes FIRE's and KERPLE's tables.
func (s section) Markdown(w io.Writer) {
	fmt.Fprintf(w, "\n## Position schemes' learned weights\n\n")
	rep := s.rep
	if s.writeFIRE(w) {
		fmt.Fprintf(w, "\nFIRE divides each query's distances by ψ(max(threshold, its position)), ψ(x) = log(|c|·x + 1); the threshold is |m·L0|. While the threshold is above the positions a window holds, the MLP's input at the farthest key grows with the length past the largest input training gave it (its column), and the MLP extrapolates; once positions pass the threshold the input stays at 1 and it interpolates. The bias is the MLP's output there, at the last query of a window of each length and its first key (mean over heads and seeds); the training length is %d.\n", rep.TrainLen)
	}
	s.writeKERPLE(w)
}

// labels are the comparison's labels, in its order, that the runs measured.
func (s section) labels() []string {
	var out []string
	for _, series := range s.rep.Series {
		for _, r := range s.runs {
			if r.label == series.Label {
				out = append(out, series.Label)
				break
			}
		}
	}
	return out
}

// eachFIRE calls f for every label's FIRE layers over its seeds, in the comparison's order;
// false when no run has FIRE.
func (s section) eachFIRE(f func(label string, l int, st fireStat)) bool {
	found := false
	for _, label := range s.labels() {
		for l := 0; ; l++ {
			st, ok := fireStats(s.runs, label, l)
			if !ok {
				break
			}
			f(label, l, st)
			found = true
		}
	}
	return found
}

// writeFIRE writes FIRE's table, a row per label and layer; false when no run has FIRE.
func (s section) writeFIRE(w io.Writer) bool {
	rep, wrote := s.rep, false
	return s.eachFIRE(func(label string, l int, st fireStat) {
		if !wrote {
			fmt.Fprintf(w, "FIRE's threshold (mean over seeds, range) and c, the largest MLP input training gave, and the input and bias at the farthest key of each length:\n\n| run | layer | threshold | c | input in training |")
			for _, n := range rep.Lengths {
				fmt.Fprintf(w, " input %s |", measure.Ratio(n, rep.TrainLen))
			}
			for _, n := range rep.Lengths {
				fmt.Fprintf(w, " bias %s |", measure.Ratio(n, rep.TrainLen))
			}
			fmt.Fprintf(w, "\n|---|---:|---:|---:|---:|%s\n", strings.Repeat("---:|", 2*len(rep.Lengths)))
			wrote = true
		}
		fmt.Fprintf(w, "| %s | %d | %s | %.3g | %.3f |%s%s\n", label, l, st.thresholdCell(), st.c, st.trainedInput, cells(st.input, "%.3f"), cells(st.bias, "%.3f"))
	})
}

// thresholdCell is the threshold's mean over seeds and, with several, their range.
func (st fireStat) thresholdCell() string {
	if st.seeds < 2 {
		return fmt.Sprintf("%.0f", st.threshold)
	}
	return fmt.Sprintf("%.0f (%.0f–%.0f)", st.threshold, st.low, st.high)
}

// cells formats values as table cells.
func cells(x []float64, format string) string {
	var b strings.Builder
	for _, v := range x {
		fmt.Fprintf(&b, " "+format+" |", v)
	}
	return b.String()
}

// writeKERPLE writes KERPLE's r1 and r2 by head, a row per label and layer.
func (s section) writeKERPLE(w io.Writer) {
	wrote := false
	for _, label := range s.labels() {
		for l := 0; ; l++ {
			st, ok := kerpleStats(s.runs, label, l)
			if !ok {
				break
			}
			if !wrote {
				fmt.Fprintf(w, "\nKERPLE's bias is −r1·log(1 + r2·δ) at distance δ; r1 and r2 by head (mean over seeds):\n\n| run | layer | r1 | r2 |\n|---|---:|---|---|\n")
				wrote = true
			}
			fmt.Fprintf(w, "| %s | %d | %s | %s |\n", label, l, joinFloats(st.r1), joinFloats(st.r2))
		}
	}
}

// joinFloats lists values with three significant digits.
func joinFloats(x []float64) string {
	s := make([]string, len(x))
	for i, v := range x {
		s[i] = strconv.FormatFloat(v, 'g', 3, 64)
	}
	return strings.Join(s, ", ")
}
