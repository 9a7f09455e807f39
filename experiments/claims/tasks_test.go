package claims

import (
	"path/filepath"
	"testing"

	"extrapolate/experiments/config"
	"extrapolate/experiments/measure"
	"extrapolate/experiments/measure/tasks"
)

// taskReport is a comparison of task runs, one seed each, whose exact match on copy at 1x and
// 2x is given by label; the configs are the committed ones with a task section.
func taskReport(t *testing.T, exact map[string][2]float64) *measure.Report {
	t.Helper()
	rep := &measure.Report{}
	for _, label := range []string{"nope", "t5", "rope", "learned", "sinusoidal"} {
		c, err := config.Load(filepath.Join("..", "..", "configs", label+".yaml"), []string{"task={names: [copy]}"})
		if err != nil {
			t.Fatal(err)
		}
		res := &measure.Result{Name: label, Status: "ok"}
		var cells []tasks.Cell
		for i, ratio := range []float64{1, 2} {
			c := tasks.Cell{Task: "copy", Size: int(16 * ratio), Ratio: ratio, Applicable: true, Examples: 100}
			c.Exact = int(100 * exact[label][i])
			c.ExactMatch = exact[label][i]
			cells = append(cells, c)
		}
		if err := res.SetMeasurement("tasks", cells); err != nil {
			t.Fatal(err)
		}
		rep.Runs = append(rep.Runs, measure.RunResult{Label: label, Seed: 1, Config: c, Result: res})
		rep.Series = append(rep.Series, &measure.Series{Label: label, Position: label})
	}
	return rep
}

// TestTaskClaims checks each task claim's verdict on both sides of its rule.
func TestTaskClaims(t *testing.T) {
	judge := func(rep *measure.Report) map[string]Verdict {
		out := map[string]Verdict{}
		for _, r := range Judge(rep, nil) {
			out[r.ID] = r.Verdict
		}
		return out
	}
	good := map[string][2]float64{"nope": {1, 0.6}, "t5": {1, 0.5}, "rope": {0.95, 0.05}, "learned": {0.9, 0}, "sinusoidal": {0.92, 0.1}}
	v := judge(taskReport(t, good))
	for _, id := range []string{"tasks_solvable", "tasks_rope_copy_fails", "tasks_nope_ranking"} {
		if v[id] != Reproduced {
			t.Errorf("%s: %s, want reproduced", id, v[id])
		}
	}
	if _, ok := v["alibi_flat"]; ok {
		t.Error("a perplexity claim was judged on a comparison of task runs")
	}
	for name, c := range map[string]struct {
		exact map[string][2]float64
		id    string
	}{
		"nothing learned":   {map[string][2]float64{"nope": {0.8, 0.6}, "t5": {0.85, 0.5}, "rope": {0.89, 0}, "learned": {0.5, 0}, "sinusoidal": {0.7, 0}}, "tasks_solvable"},
		"rope copies at 2x": {map[string][2]float64{"nope": {1, 0.6}, "t5": {1, 0.5}, "rope": {1, 0.11}, "learned": {1, 0}, "sinusoidal": {1, 0}}, "tasks_rope_copy_fails"},
		"t5 no better":      {map[string][2]float64{"nope": {1, 0.6}, "t5": {1, 0.1}, "rope": {1, 0.05}, "learned": {1, 0}, "sinusoidal": {1, 0.1}}, "tasks_nope_ranking"},
		"nope below rope":   {map[string][2]float64{"nope": {1, 0.04}, "t5": {1, 0.5}, "rope": {1, 0.05}, "learned": {1, 0}, "sinusoidal": {1, 0}}, "tasks_nope_ranking"},
	} {
		if got := judge(taskReport(t, c.exact))[c.id]; got != NotReproduced {
			t.Errorf("%s: %s is %s, want not reproduced", name, c.id, got)
		}
	}
}
