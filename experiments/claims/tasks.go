package claims

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"extrapolate/experiments/measure"
	"extrapolate/experiments/measure/tasks"
)

// Claims on tasks (package task): exact match by size, trained up to a task's largest training
// size (1x) and scored past it. Their thresholds were fixed before any task comparison was
// committed. The one pilot they rest on (copy alone, 3000 steps at batch 32, seed 1, width
// 64) gave RoPE, NoPE and ALiBi high exact match at 1x and none at 2x; the ranking's rule takes
// the paper's own comparison (greater, on the mean over tasks) with no margin.
const (
	// taskSolved: exact match at 1x at or above this counts as a task learned.
	taskSolved = 0.9
	// taskFailed: exact match at or below this counts as failing (the pilot: 0%).
	taskFailed = 0.1
	// rankingRatio is the size, in multiples of the largest training size, the ranking is
	// judged at: Kazemnejad et al. trained up to 20 and tested to 40.
	rankingRatio = 2
)

var tasksSolvable = claim{
	id:        "tasks_solvable",
	statement: "Each task is learned at the sizes it trains on: some scheme answers it at its largest training size",
	rule:      fmt.Sprintf("for every task, the best run's exact match (mean over seeds) at 1x the largest training size ≥ %g.", taskSolved),
	check:     checkSolvable,
	relevant:  hasTasks,
}

var tasksRoPECopyFails = claim{
	id:        "tasks_rope_copy_fails",
	statement: "Plain RoPE does not copy past its training sizes (Kazemnejad et al. 2023; Ruoss et al. 2023)",
	rule:      fmt.Sprintf("plain RoPE's exact match on copy (mean over seeds) ≥ %g at 1x and ≤ %g at 2x and beyond.", taskSolved, taskFailed),
	check:     checkRoPECopy,
	relevant:  hasTasks,
}

var tasksNoPERanking = claim{
	id:        "tasks_nope_ranking",
	statement: "NoPE and T5's bias generalise to longer instances better than RoPE and absolute positions (Kazemnejad et al. 2023)",
	rule: fmt.Sprintf("the mean over tasks of exact match at %dx the largest training size (mean over seeds; a size a scheme cannot be evaluated at counts 0): "+
		"NoPE's and T5's each above plain RoPE's, learned positions' and sinusoidal's.", rankingRatio),
	check:    checkNoPERanking,
	relevant: hasTasks,
}

// hasTasks reports whether some run of the comparison was trained on tasks.
func hasTasks(rep *judging) bool {
	for _, r := range rep.Runs {
		if r.Config.Task != nil {
			return true
		}
	}
	return false
}

// taskStats are the comparison's task scores, by label.
func (rep *judging) taskStats() (map[string][]tasks.Stat, error) {
	stats, err := tasks.Stats(rep.Report)
	if err != nil {
		return nil, err
	}
	out := map[string][]tasks.Stat{}
	for _, st := range stats {
		out[st.Label] = append(out[st.Label], st)
	}
	return out, nil
}

// at finds a label's stat of a task at ratio times its largest training size.
func at(stats []tasks.Stat, task string, ratio float64) (tasks.Stat, bool) {
	for _, st := range stats {
		if st.Task == task && math.Abs(st.Ratio-ratio) < 1e-9 {
			return st, true
		}
	}
	return tasks.Stat{}, false
}

// taskNames lists the tasks of the stats, in order.
func taskNames(stats map[string][]tasks.Stat, labels []string) []string {
	var names []string
	for _, l := range labels {
		for _, st := range stats[l] {
			if !slices.Contains(names, st.Task) {
				names = append(names, st.Task)
			}
		}
	}
	return names
}

func (rep *judging) labels() []string {
	var out []string
	for _, s := range rep.Series {
		out = append(out, s.Label)
	}
	return out
}

func checkSolvable(rep *judging) (Verdict, string) {
	stats, err := rep.taskStats()
	if err != nil {
		return Undecided, err.Error()
	}
	verdict := Reproduced
	var ev []string
	for _, name := range taskNames(stats, rep.labels()) {
		best, bestLabel := -1.0, ""
		for _, l := range rep.labels() {
			if st, ok := at(stats[l], name, 1); ok && st.Seeds > 0 && st.Mean > best {
				best, bestLabel = st.Mean, l
			}
		}
		if best < 0 {
			return NotApplicable, fmt.Sprintf("No run scored %s at its largest training size.", name)
		}
		if best < taskSolved {
			verdict = NotReproduced
		}
		ev = append(ev, fmt.Sprintf("%s: %s %s", name, bestLabel, measure.Percent(best)))
	}
	if len(ev) == 0 {
		return NotApplicable, "No run was trained on tasks."
	}
	return verdict, "Best exact match at 1x: " + strings.Join(ev, "; ") + "."
}

func checkRoPECopy(rep *judging) (Verdict, string) {
	s, err := rep.the(plainRoPE)
	if err != nil {
		return NotApplicable, "The comparison has no single plain RoPE run."
	}
	stats, err := rep.taskStats()
	if err != nil {
		return Undecided, err.Error()
	}
	verdict := Reproduced
	var ev []string
	found := false
	for _, st := range stats[s.Label] {
		if st.Task != "copy" || st.Ratio < 1 || st.Seeds == 0 {
			continue
		}
		found = true
		switch {
		case st.Ratio == 1 && st.Mean < taskSolved, st.Ratio >= rankingRatio && st.Mean > taskFailed:
			verdict = NotReproduced
		}
		ev = append(ev, fmt.Sprintf("%gx %s", st.Ratio, measure.Percent(st.Mean)))
	}
	if !found {
		return NotApplicable, "Plain RoPE was not scored on copy."
	}
	return verdict, fmt.Sprintf("%s on copy: %s.", s.Label, strings.Join(ev, ", "))
}

func checkNoPERanking(rep *judging) (Verdict, string) {
	stats, err := rep.taskStats()
	if err != nil {
		return Undecided, err.Error()
	}
	score := func(sel selector) (string, float64, error) {
		s, err := rep.the(sel)
		if err != nil {
			return "", 0, err
		}
		var sum float64
		names := taskNames(stats, rep.labels())
		for _, name := range names {
			if st, ok := at(stats[s.Label], name, rankingRatio); ok && st.Seeds > 0 {
				sum += st.Mean
			}
		}
		return s.Label, sum / float64(max(1, len(names))), nil
	}
	var better, worse []string
	means := map[string]float64{}
	for _, sel := range []selector{plainNoPE, plainT5} {
		l, m, err := score(sel)
		if err != nil {
			return NotApplicable, fmt.Sprintf("The comparison needs one %s run.", sel.Name)
		}
		better, means[l] = append(better, l), m
	}
	for _, sel := range []selector{plainRoPE, anyLearned, plainSinusoidal} {
		l, m, err := score(sel)
		if err != nil {
			return NotApplicable, fmt.Sprintf("The comparison needs one %s run.", sel.Name)
		}
		worse, means[l] = append(worse, l), m
	}
	verdict := Reproduced
	for _, b := range better {
		for _, w := range worse {
			if !(means[b] > means[w]) {
				verdict = NotReproduced
			}
		}
	}
	var ev []string
	for _, l := range append(better, worse...) {
		ev = append(ev, fmt.Sprintf("%s %s", l, measure.Percent(means[l])))
	}
	return verdict, fmt.Sprintf("Mean exact match over tasks at %dx: %s.", rankingRatio, strings.Join(ev, ", "))
}
