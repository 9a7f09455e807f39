package evaluate

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"path/filepath"
	"slices"

	"gonum.org/v1/plot/plotter"

	"extrapolate/experiments/measure"
	"extrapolate/experiments/measure/tasks"
	"extrapolate/experiments/plot"
	"extrapolate/experiments/training"
	"extrapolate/position"
	"extrapolate/task"
)

// Files of a task checkpoint's evaluation, beside ScalingsJSON.
const (
	TaskScalingsCSV = "tasks_by_scaling.csv"
	TaskScalingsPNG = "tasks_by_scaling.png"
	TaskScalingsSVG = "tasks_by_scaling.svg"
)

// tasksUnder scores a model trained on tasks on their held-out examples, the same
// ones its run was scored on, at every test size under each scaling. Perplexity on the corpus,
// which the model never saw, is not scored.
func tasksUnder(ctx context.Context, t *training.Trained, variants []Variant, w io.Writer) (*Report, error) {
	c := t.Config()
	_, examples := t.Resolved.Tasks()
	ev := &measure.Evaluation{Resolved: t.Resolved, Model: t.Model, Progress: w}
	rep := &Report{Name: c.Name, TrainLen: c.Train.SeqLen, BatchTokens: c.Eval.BatchTokens, Partial: t.Progress, Examples: examples}
	err := eachVariant(c, variants, w, func(name string, s position.Scheme) error {
		ev.Scheme = s
		cells, err := tasks.Score(ctx, ev)
		rep.Results = append(rep.Results, Result{Scaling: name, Tasks: cells})
		return err
	})
	if err != nil {
		return nil, err
	}
	return rep, nil
}

// writeTasks saves a task checkpoint's report as CSV, JSON and small multiples: a panel per
// task, exact match against size, a line per scaling.
func (rep *Report) writeTasks(dir string) error {
	var b bytes.Buffer
	cw := csv.NewWriter(&b)
	cw.Write(append([]string{"scaling"}, tasks.Columns...))
	for _, r := range rep.Results {
		for _, c := range r.Tasks {
			cw.Write(append([]string{r.Scaling}, c.Row()...))
		}
	}
	cw.Flush()
	if err := measure.WriteFile(filepath.Join(dir, TaskScalingsCSV), b.Bytes()); err != nil {
		return err
	}
	if err := rep.taskFigure().Save(filepath.Join(dir, TaskScalingsPNG), filepath.Join(dir, TaskScalingsSVG)); err != nil {
		return err
	}
	return measure.WriteJSON(filepath.Join(dir, ScalingsJSON), rep)
}

// taskNames are the tasks scored, in the order the first scaling has them.
func (rep *Report) taskNames() []string {
	var names []string
	for _, c := range rep.Results[0].Tasks {
		if !slices.Contains(names, c.Task) {
			names = append(names, c.Task)
		}
	}
	return names
}

// taskFigure is a panel per task and a line per scaling, with each size's 95% Wilson interval
// as error bars.
func (rep *Report) taskFigure() plot.Multiples {
	f := plot.Multiples{
		Title:  fmt.Sprintf("%s: exact match by size under each RoPE scaling, %d examples a size", rep.Name, rep.Examples),
		XLabel: "size (log scale)", YLabel: "exact match", Cols: 3,
	}
	if len(rep.Results) == 0 {
		return f
	}
	for _, name := range rep.taskNames() {
		pn := plot.Panel{Title: name}
		if t, err := task.Lookup(name); err == nil {
			pn.Title = fmt.Sprintf("%s (trained up to %d)", name, t.Sizes().Max)
			pn.Mark, pn.MarkLabel = float64(t.Sizes().Max), "largest training size"
		}
		styles := rep.styles()
		for i, r := range rep.Results {
			l := plot.Line{Label: r.Scaling}
			for _, c := range r.Tasks {
				if c.Task == name && c.Applicable {
					l.XYs = append(l.XYs, plotter.XY{X: float64(c.Size), Y: c.ExactMatch})
					l.Low, l.High = append(l.Low, c.ExactMatch-c.Low), append(l.High, c.High-c.ExactMatch)
				}
			}
			if len(l.XYs) > 0 {
				pn.Lines = append(pn.Lines, l)
				pn.Styles = append(pn.Styles, styles[i])
			}
		}
		f.Panels = append(f.Panels, pn)
	}
	return f
}

// tasksTable renders a task checkpoint's report as text: for each task, a row per scaling and
// a column per size, exact match in percent.
func (rep *Report) tasksTable() string {
	var b bytes.Buffer
	if len(rep.Results) == 0 {
		return ""
	}
	for _, name := range rep.taskNames() {
		fmt.Fprintf(&b, "%-24s", "exact match: "+name)
		for _, c := range rep.Results[0].Tasks {
			if c.Task == name {
				fmt.Fprintf(&b, " %11s", fmt.Sprintf("%d (%.3gx)", c.Size, c.Ratio))
			}
		}
		b.WriteByte('\n')
		for _, r := range rep.Results {
			fmt.Fprintf(&b, "%-24s", r.Scaling)
			for _, c := range r.Tasks {
				switch {
				case c.Task != name:
				case !c.Applicable:
					fmt.Fprintf(&b, " %11s", "n/a")
				default:
					fmt.Fprintf(&b, " %11s", measure.Percent(c.ExactMatch))
				}
			}
			b.WriteByte('\n')
		}
	}
	fmt.Fprintf(&b, "teacher-forced exact match (greedy decoding's) on %d held-out examples a size\n", rep.Examples)
	return b.String()
}
