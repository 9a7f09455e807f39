package tasks

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
	"extrapolate/task"
)

// Files of a comparison folder.
const (
	ComparisonCSV = "tasks_by_run.csv"
	ComparisonPNG = "tasks_by_run.png"
	ComparisonSVG = "tasks_by_run.svg"
)

// Stat is one label's exact match on one task at one size, over its seeds.
type Stat struct {
	Label string  `json:"label"`
	Task  string  `json:"task"`
	Size  int     `json:"size"`
	Ratio float64 `json:"ratio"`
	// Seeds are the seeds scored here; 0 when the size is not applicable (NotApplicable says
	// why).
	Seeds int `json:"seeds"`
	// Mean and Std are the exact match's mean and sample standard deviation over seeds.
	Mean float64 `json:"exact_match_mean"`
	Std  float64 `json:"exact_match_std"`
	// Low and High bound the exact match of every seed's examples pooled: the 95% Wilson
	// interval over examples, which says how far the examples alone move the mean.
	Low  float64 `json:"exact_match_low"`
	High float64 `json:"exact_match_high"`
	// TokenAccuracy is the per-token accuracy's mean over seeds.
	TokenAccuracy float64 `json:"token_accuracy_mean"`
	NotApplicable string  `json:"not_applicable,omitempty"`
}

// Stats aggregates every label's cells over its seeds, in the report's order of labels, then
// tasks and sizes as the runs scored them; none when no run has the measure.
func Stats(rep *measure.Report) ([]Stat, error) {
	var out []Stat
	for _, s := range rep.Series {
		type key struct {
			task string
			size int
		}
		byKey := map[key][]Cell{}
		var order []key
		for _, r := range rep.Runs {
			if r.Label != s.Label || !r.Result.OK() {
				continue
			}
			cells, err := Of(r.Result)
			if err != nil {
				return nil, fmt.Errorf("run %s, seed %d: %w", r.Label, r.Seed, err)
			}
			for _, c := range cells {
				k := key{c.Task, c.Size}
				if _, ok := byKey[k]; !ok {
					order = append(order, k)
				}
				byKey[k] = append(byKey[k], c)
			}
		}
		for _, k := range order {
			out = append(out, stat(s.Label, byKey[k]))
		}
	}
	return out, nil
}

// stat aggregates one label's cells of a task and size over seeds.
func stat(label string, cells []Cell) Stat {
	st := Stat{Label: label, Task: cells[0].Task, Size: cells[0].Size, Ratio: cells[0].Ratio}
	var exact, tokens []float64
	k, n := 0, 0
	for _, c := range cells {
		if !c.Applicable {
			st.NotApplicable = c.Reason
			continue
		}
		exact, tokens = append(exact, c.ExactMatch), append(tokens, c.TokenAccuracy)
		k, n = k+c.Exact, n+c.Examples
	}
	if st.Seeds = len(exact); st.Seeds == 0 {
		return st
	}
	st.NotApplicable = ""
	st.Mean, st.Std = measure.MeanStd(exact)
	st.TokenAccuracy, _ = measure.MeanStd(tokens)
	st.Low, st.High = Wilson(k, n)
	return st
}

// Section gathers the comparison's task scores, every run's cells checked first (check); nil
// when no run was trained on tasks.
func (Measure) Section(rep *measure.Report) (measure.Section, error) {
	for _, r := range rep.Runs {
		if err := check(r); err != nil {
			return nil, fmt.Errorf("%s: %w", filepath.Join(r.Dir, measure.ResultsJSON), err)
		}
	}
	stats, err := Stats(rep)
	if err != nil || len(stats) == 0 {
		return nil, err
	}
	return section{rep, stats}, nil
}

type section struct {
	rep   *measure.Report
	stats []Stat
}

// taskNames are the tasks of the stats, in the order they come.
func (s section) taskNames() []string {
	var names []string
	for _, st := range s.stats {
		if !slices.Contains(names, st.Task) {
			names = append(names, st.Task)
		}
	}
	return names
}

// Write writes every label's exact match by task and size as CSV, and the small multiples.
func (s section) Write(dir string) error {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.Write([]string{"label", "task", "size", "ratio", "seeds", "exact_match_mean", "exact_match_std", "exact_match_low", "exact_match_high", "token_accuracy_mean", "not_applicable"})
	for _, st := range s.stats {
		w.Write([]string{st.Label, st.Task, strconv.Itoa(st.Size), measure.CSVFloat(st.Ratio), strconv.Itoa(st.Seeds), measure.CSVFloat(st.Mean),
			measure.CSVFloat(st.Std), measure.CSVFloat(st.Low), measure.CSVFloat(st.High), measure.CSVFloat(st.TokenAccuracy), st.NotApplicable})
	}
	w.Flush()
	if err := measure.WriteFile(filepath.Join(dir, ComparisonCSV), b.Bytes()); err != nil {
		return err
	}
	return s.figure().Save(filepath.Join(dir, ComparisonPNG), filepath.Join(dir, ComparisonSVG))
}

// figure is a heat map per task, a row per series scored on it and a column per size, each cell
// its mean exact match over seeds in percent: fourteen panels of lines hid each other at 0 and
// needed a colour per scheme, where a row names its scheme and every value shows. A row is named
// by its scheme (measure.PositionOf); a comparison of task runs has a series per scheme and
// task, one in each panel. The sizes' axis carries the task's unit (sizeUnits).
func (s section) figure() plot.Matrices {
	f := plot.Matrices{
		Title: fmt.Sprintf("%s: exact match (%%) by scheme and size, mean over seeds; blue dashes: largest training size", s.rep.Name),
		Cols:  3,
	}
	for _, name := range s.taskNames() {
		m := plot.Matrix{Title: name, XLabel: SizeLabel(name)}
		if t, err := task.Lookup(name); err == nil {
			m.Title = fmt.Sprintf("%s (trained up to %d)", name, t.Sizes().Max)
			m.Mark = t.Sizes().Max
		}
		for _, st := range s.stats {
			if st.Task == name && !slices.Contains(m.Sizes, st.Size) {
				m.Sizes = append(m.Sizes, st.Size)
			}
		}
		slices.Sort(m.Sizes)
		for _, series := range s.rep.Series {
			row := make([]float64, len(m.Sizes))
			scored := false
			for i, size := range m.Sizes {
				row[i] = math.NaN()
				for _, st := range s.stats {
					if st.Label == series.Label && st.Task == name && st.Size == size {
						scored = true
						if st.Seeds > 0 {
							row[i] = st.Mean
						}
					}
				}
			}
			if scored {
				m.Rows, m.Values = append(m.Rows, series.Position), append(m.Values, row)
			}
		}
		f.Panels = append(f.Panels, m)
	}
	return f
}

// sizeUnits are what a built-in task's size counts (package task's documentation of each).
var sizeUnits = map[string]string{
	"copy":              "letters",
	"reverse":           "letters",
	"sorting":           "letters",
	"selective_copy":    "letters",
	"addition":          "digits per operand",
	"parity":            "bits",
	"parity_scratchpad": "bits",
	"addition_hints":    "digits",
	"flipflop":          "instructions",
	"counting":          "statements",
	"mqar":              "key-value pairs",
	"niah_single":       "bytes",
	"niah_multikey":     "bytes",
	"niah_multivalue":   "bytes",
	"niah_multiquery":   "bytes",
	"vartrack":          "bytes",
}

// SizeLabel is the title of a task's size axis, with its unit; a task registered outside this
// repository says that its unit is its own.
func SizeLabel(name string) string {
	if u, ok := sizeUnits[name]; ok {
		return "size (" + u + ")"
	}
	return "size (the task's own unit)"
}

// Markdown writes the figure and, for each task, a table of exact match by label and size.
func (s section) Markdown(w io.Writer) {
	fmt.Fprintf(w, "\n## Tasks: exact match by size\n\n![exact match by scheme and size, a heat map per task](%s)\n\n", ComparisonPNG)
	fmt.Fprintf(w, "Exact match: every answer byte the model's most likely token, given the true bytes before it, which is greedy decoding's exact match. "+
		"Mean ± standard deviation over seeds, and in brackets the 95%% Wilson interval over all seeds' examples pooled; "+
		"the size's ratio to the largest training size in the header. The tasks' sources: docs/tasks.md. "+
		"The effective size is RULER's effective length (Hsieh et al. 2024) in this task's sizes: the largest size up to which "+
		"every size's mean exact match is at least %.1f%%, RULER's threshold (Llama 2 7B's score at 4K); none when the smallest falls short.\n", 100*EffectiveThreshold)
	for _, name := range s.taskNames() {
		var sizes []Stat // the task's sizes, as its first series has them
		var labels []string
		for _, st := range s.stats {
			if st.Task != name {
				continue
			}
			if len(labels) == 0 || labels[0] == st.Label {
				sizes = append(sizes, st)
			}
			if !slices.Contains(labels, st.Label) {
				labels = append(labels, st.Label)
			}
		}
		fmt.Fprintf(w, "\n### %s\n\n| run |", name)
		for _, st := range sizes {
			fmt.Fprintf(w, " %d (%.3gx) |", st.Size, st.Ratio)
		}
		fmt.Fprintf(w, " effective size |\n|---|%s\n", strings.Repeat("---:|", len(sizes)+1))
		for _, label := range labels {
			fmt.Fprintf(w, "| %s |", label)
			for _, sz := range sizes {
				fmt.Fprintf(w, " %s |", s.cell(label, name, sz.Size))
			}
			fmt.Fprintf(w, " %s |\n", s.effective(label, name))
		}
	}
}

// EffectiveThreshold is RULER's threshold for a model's effective length (Hsieh et al. 2024,
// "RULER: What's the Real Context Size of Your Long-Context Language Models?", §4): Llama 2
// 7B's score at 4K, 85.6%.
const EffectiveThreshold = 0.856

// Effective is the largest size of stats, one label's on one task, up to which every scored
// size's mean exact match is at least EffectiveThreshold, and whether there is one: RULER's
// effective length in the task's sizes. A size not applicable ends it.
func Effective(stats []Stat) (Stat, bool) {
	sorted := slices.Clone(stats)
	slices.SortFunc(sorted, func(a, b Stat) int { return a.Size - b.Size })
	var best Stat
	ok := false
	for _, st := range sorted {
		if st.Seeds == 0 || st.Mean < EffectiveThreshold {
			break
		}
		best, ok = st, true
	}
	return best, ok
}

// effective is a table's effective size for a label and task.
func (s section) effective(label, name string) string {
	var sts []Stat
	for _, st := range s.stats {
		if st.Label == label && st.Task == name {
			sts = append(sts, st)
		}
	}
	if st, ok := Effective(sts); ok {
		return fmt.Sprintf("%d (%.3gx)", st.Size, st.Ratio)
	}
	return "none"
}

// cell is a table's entry for a label, task and size.
func (s section) cell(label, name string, size int) string {
	for _, st := range s.stats {
		if st.Label == label && st.Task == name && st.Size == size {
			if st.Seeds == 0 {
				return "n/a"
			}
			return fmt.Sprintf("%.0f ± %.0f [%.0f, %.0f]", 100*st.Mean, 100*st.Std, 100*st.Low, 100*st.High)
		}
	}
	return "–"
}
