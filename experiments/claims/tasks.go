package claims

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"extrapolate/experiments/measure"
	"extrapolate/experiments/measure/tasks"
)

// Claims on tasks (package task): exact match by size, trained up to a task's largest training
// size (1x) and scored past it. A comparison of task runs has a series per scheme and task, so
// a claim gathers a scheme's series by task. Their thresholds were fixed before any task
// comparison was committed, from pilots of plain RoPE, seed 1, width 64, batch 32: copy alone,
// 3000 steps, 100% exact at 1x and 0% from 1.5x; each task alone, 2000 steps, flip-flop 100%
// at 1x, 83% at 2x and 47% at 4x, niah_single 100% at 1x and 2x, 26% at 3x and 2% at 4x. The
// ranking's rule takes the paper's own comparison (greater, on the mean over tasks) with no
// margin. They were written before the committed comparison's results were read; the needle
// claim while it ran.
const (
	// taskSolved: exact match at 1x at or above this counts as a task learned.
	taskSolved = 0.9
	// taskFailed: exact match at or below this counts as failing (the pilot: 0%).
	taskFailed = 0.1
	// rankingRatio is the size, in multiples of the largest training size, the ranking is
	// judged at: Kazemnejad et al. trained up to 20 and tested to 40.
	rankingRatio = 2
	// rankingSeeds is the fewest seeds with results a claim that ranks means over seeds needs:
	// three, the fewest whose spread says something of a mean (two give one difference), which
	// the committed task comparison's five seeds hold with two runs to spare. A part of it run
	// with one seed (-runs, a pilot) leaves such a claim undecided rather than judged on one
	// model per scheme.
	rankingSeeds = 3
	// flipFlopKept: at 4x, RoPE keeps at most this share of its flip-flop exact match at 1x
	// (the pilot, 2000 steps: 100% at 1x, 47% at 4x).
	flipFlopKept = 0.75
	// countingFailed: at 2x, RoPE and ALiBi count at most this share of programs right. Fixed
	// from a pilot of counting alone (seed 7, which no committed comparison trains; 2000 steps,
	// batch 32), run before the comparison with counting: exact match at 1x RoPE 55%, ALiBi 50%,
	// NoPE 46%; at 2x 22%, 36% and 29%.
	countingFailed = 0.5
)

var tasksSolvable = claim{
	id:        "tasks_solvable",
	statement: "Each task is learned at the sizes it trains on: some scheme answers it at its largest training size",
	rule: fmt.Sprintf("for every task, the best run's exact match (mean over seeds) at 1x the largest training size ≥ %g. "+
		"Undecided where the only tasks not learned are those whose pilots found no setting that learns them within the budget of about 10 minutes a run, named with their pilots.", taskSolved),
	check:    checkSolvable,
	relevant: hasTasks,
}

var tasksRoPECopyFails = claim{
	id:        "tasks_rope_copy_fails",
	statement: "Plain RoPE does not copy past its training sizes (Kazemnejad et al. 2023; Ruoss et al. 2023)",
	rule:      fmt.Sprintf("plain RoPE's exact match on copy (mean over seeds) ≥ %g at 1x and ≤ %g at 2x and beyond.", taskSolved, taskFailed),
	check:     checkRoPECopy,
	relevant:  hasTasks,
}

var tasksFlipFlopDegrades = claim{
	id:        "tasks_flipflop_degrades",
	statement: "RoPE learns flip-flop at its training sizes but loses it past them (Liu et al. 2023's attention glitches; Golovneva et al. 2024)",
	rule:      fmt.Sprintf("plain RoPE's exact match on flipflop (mean over seeds) ≥ %g at 1x, and at 4x at most %g of its 1x.", taskSolved, flipFlopKept),
	check:     checkFlipFlop,
	relevant:  hasTasks,
}

var tasksNeedleRoPE = claim{
	id:        "tasks_needle_rope_fails",
	statement: "RoPE finds a needle at its training length but not far past it (Hsieh et al. 2024, RULER; Gelberg et al. 2025, DroPE)",
	rule:      fmt.Sprintf("plain RoPE's exact match on niah_single (mean over seeds) ≥ %g at 1x and ≤ %g at 4x.", taskSolved, taskFailed),
	check:     checkNeedleRoPE,
	relevant:  hasTasks,
}

var tasksCountingFails = claim{
	id:        "tasks_counting_fails",
	statement: "Positions that count tokens fail at counting, which CoPE solves (Golovneva et al. 2024): RoPE and ALiBi do not learn it at their training sizes and lose more past them",
	rule:      fmt.Sprintf("plain RoPE's and plain ALiBi's exact match on counting (mean over seeds) below %g at 1x and at most %g at 2x.", taskSolved, countingFailed),
	check:     checkCounting,
	relevant:  hasTasks,
}

var tasksNoPERanking = claim{
	id:        "tasks_nope_ranking",
	statement: "NoPE and T5's bias generalise to longer instances better than RoPE and absolute positions (Kazemnejad et al. 2023)",
	rule: fmt.Sprintf("over the tasks that all five schemes learned at 1x (exact match ≥ %g, mean over seeds), as Kazemnejad et al. compared models trained to solve each task, "+
		"the mean of exact match at %dx the largest training size (mean over seeds; a size a scheme cannot be evaluated at counts 0): "+
		"NoPE's and T5's each above plain RoPE's, learned positions' and sinusoidal's. Undecided where no task is learned by all five.", taskSolved, rankingRatio),
	check:    checkNoPERanking,
	relevant: hasTasks,
	seeds:    rankingSeeds,
}

// hasTasks reports whether some run of the comparison was trained on tasks.
func hasTasks(rep *judging) bool {
	for _, r := range rep.Runs {
		if r.Config().Task != nil {
			return true
		}
	}
	return false
}

// byTask is the task stats of the series sel picks, by task: each series of a task comparison
// trains on one task, or on several, and a scheme may have a series per task; two of its
// series scored on the same task make the claim ambiguous.
func (rep *judging) byTask(sel selector, stats map[string][]tasks.Stat) (map[string][]tasks.Stat, error) {
	out := map[string][]tasks.Stat{}
	owner := map[string]string{}
	for _, s := range rep.selectAll(sel) {
		for _, st := range stats[s.Label] {
			if o, ok := owner[st.Task]; ok && o != s.Label {
				return nil, fmt.Errorf("%s and %s are each %s scored on %s; the claim needs one", o, s.Label, sel.Name, st.Task)
			}
			owner[st.Task] = s.Label
			out[st.Task] = append(out[st.Task], st)
		}
	}
	if len(out) == 0 {
		return nil, errNoSeries
	}
	return out, nil
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

// at finds the stat of a task's sizes at ratio times its largest training size.
func at(stats []tasks.Stat, ratio float64) (tasks.Stat, bool) {
	for _, st := range stats {
		if math.Abs(st.Ratio-ratio) < 1e-9 {
			return st, true
		}
	}
	return tasks.Stat{}, false
}

// learned is "" when the stats show a task learned at 1x (exact match, mean over seeds, at
// least taskSolved), and otherwise the verdict and why: a claim on generalisation past the
// training sizes says nothing of a task not learned within them, so it is undecided then (not
// applicable when the task was not scored at 1x at all).
func learned(who, task string, sts []tasks.Stat) (Verdict, string) {
	one, ok := at(sts, 1)
	if !ok || one.Seeds == 0 {
		return NotApplicable, fmt.Sprintf("%s was not scored on %s at 1x.", capitalise(who), task)
	}
	if one.Mean < taskSolved {
		return Undecided, fmt.Sprintf("%s on %s: %s at 1x, below the %s a verdict on generalisation needs.", capitalise(who), task, measure.Percent(one.Mean), measure.Percent(taskSolved))
	}
	return "", ""
}

// taskNames lists the comparison's tasks, in the order its series have them.
func (rep *judging) taskNames(stats map[string][]tasks.Stat) []string {
	var names []string
	for _, s := range rep.Series {
		for _, st := range stats[s.Label] {
			if !slices.Contains(names, st.Task) {
				names = append(names, st.Task)
			}
		}
	}
	return names
}

func checkSolvable(rep *judging) (Verdict, string) {
	stats, err := rep.taskStats()
	if err != nil {
		return Undecided, err.Error()
	}
	var ev, unlearned []string
	for _, name := range rep.taskNames(stats) {
		best, bestLabel := -1.0, ""
		for _, s := range rep.Series {
			var mine []tasks.Stat
			for _, st := range stats[s.Label] {
				if st.Task == name {
					mine = append(mine, st)
				}
			}
			if st, ok := at(mine, 1); ok && st.Seeds > 0 && st.Mean > best {
				best, bestLabel = st.Mean, s.Label
			}
		}
		if best < 0 {
			return NotApplicable, fmt.Sprintf("No run scored %s at its largest training size.", name)
		}
		if best < taskSolved {
			unlearned = append(unlearned, name)
		}
		ev = append(ev, fmt.Sprintf("%s: %s %s", name, bestLabel, measure.Percent(best)))
	}
	if len(ev) == 0 {
		return NotApplicable, "No run was trained on tasks."
	}
	verdict, why := solvableVerdict(unlearned)
	return verdict, "Best exact match at 1x: " + strings.Join(ev, "; ") + "." + why
}

// ropeOn is plain RoPE's stats on one task, or the verdict and evidence that it has none.
func (rep *judging) ropeOn(name string) ([]tasks.Stat, Verdict, string) {
	return rep.on(plainRoPE, name)
}

// on is the stats of the one series sel picks on a task, or the verdict and evidence that
// there is none.
func (rep *judging) on(sel selector, name string) ([]tasks.Stat, Verdict, string) {
	stats, err := rep.taskStats()
	if err != nil {
		return nil, Undecided, err.Error()
	}
	by, err := rep.byTask(sel, stats)
	if errors.Is(err, errNoSeries) || (err == nil && by[name] == nil) {
		return nil, NotApplicable, fmt.Sprintf("%s was not scored on %s.", capitalise(sel.Name), name)
	}
	if err != nil {
		return nil, NotApplicable, notOne(err)
	}
	return by[name], "", ""
}

func checkRoPECopy(rep *judging) (Verdict, string) {
	sts, v, why := rep.ropeOn("copy")
	if sts == nil {
		return v, why
	}
	if v, why := learned(plainRoPE.Name, "copy", sts); v != "" {
		return v, why
	}
	verdict := Reproduced
	var ev []string
	for _, st := range sts {
		if st.Ratio < 1 || st.Seeds == 0 {
			continue
		}
		if st.Ratio >= rankingRatio && st.Mean > taskFailed {
			verdict = NotReproduced
		}
		ev = append(ev, fmt.Sprintf("%gx %s", st.Ratio, measure.Percent(st.Mean)))
	}
	return verdict, fmt.Sprintf("Plain RoPE on copy: %s.", strings.Join(ev, ", "))
}

func checkFlipFlop(rep *judging) (Verdict, string) {
	sts, v, why := rep.ropeOn("flipflop")
	if sts == nil {
		return v, why
	}
	one, ok1 := at(sts, 1)
	four, ok4 := at(sts, 4)
	if !ok1 || !ok4 || one.Seeds == 0 || four.Seeds == 0 {
		return NotApplicable, "Plain RoPE was not scored on flipflop at 1x and 4x."
	}
	if v, why := learned(plainRoPE.Name, "flipflop", sts); v != "" {
		return v, why
	}
	verdict := Reproduced
	if four.Mean > flipFlopKept*one.Mean {
		verdict = NotReproduced
	}
	return verdict, fmt.Sprintf("Plain RoPE on flipflop: %s at 1x, %s at 4x (%.2f of 1x).", measure.Percent(one.Mean), measure.Percent(four.Mean), four.Mean/math.Max(one.Mean, 1e-9))
}

func checkNeedleRoPE(rep *judging) (Verdict, string) {
	sts, v, why := rep.ropeOn("niah_single")
	if sts == nil {
		return v, why
	}
	one, ok1 := at(sts, 1)
	four, ok4 := at(sts, 4)
	if !ok1 || !ok4 || one.Seeds == 0 || four.Seeds == 0 {
		return NotApplicable, "Plain RoPE was not scored on niah_single at 1x and 4x."
	}
	if v, why := learned(plainRoPE.Name, "niah_single", sts); v != "" {
		return v, why
	}
	verdict := Reproduced
	if four.Mean > taskFailed {
		verdict = NotReproduced
	}
	var ev []string
	for _, st := range sts {
		if st.Seeds > 0 {
			ev = append(ev, fmt.Sprintf("%gx %s", st.Ratio, measure.Percent(st.Mean)))
		}
	}
	return verdict, fmt.Sprintf("Plain RoPE on niah_single: %s.", strings.Join(ev, ", "))
}

func checkCounting(rep *judging) (Verdict, string) {
	stats, err := rep.taskStats()
	if err != nil {
		return Undecided, err.Error()
	}
	verdict := Reproduced
	var ev []string
	for _, sel := range []selector{plainRoPE, plainALiBi} {
		by, err := rep.byTask(sel, stats)
		if errors.Is(err, errNoSeries) || (err == nil && by["counting"] == nil) {
			return NotApplicable, fmt.Sprintf("%s was not scored on counting.", sel.Name)
		}
		if err != nil {
			return NotApplicable, notOne(err)
		}
		one, ok1 := at(by["counting"], 1)
		two, ok2 := at(by["counting"], rankingRatio)
		if !ok1 || !ok2 || one.Seeds == 0 || two.Seeds == 0 {
			return NotApplicable, fmt.Sprintf("%s was not scored on counting at 1x and %dx.", sel.Name, rankingRatio)
		}
		if one.Mean >= taskSolved || two.Mean > countingFailed {
			verdict = NotReproduced
		}
		ev = append(ev, fmt.Sprintf("%s %s at 1x, %s at %dx", sel.Name, measure.Percent(one.Mean), measure.Percent(two.Mean), rankingRatio))
	}
	return verdict, "On counting: " + strings.Join(ev, "; ") + "."
}

func checkNoPERanking(rep *judging) (Verdict, string) {
	stats, err := rep.taskStats()
	if err != nil {
		return Undecided, err.Error()
	}
	better, worse := []selector{plainNoPE, plainT5}, []selector{plainRoPE, anyLearned, plainSinusoidal}
	all := append(slices.Clone(better), worse...)
	by := map[string]map[string][]tasks.Stat{}
	for _, sel := range all {
		b, err := rep.byTask(sel, stats)
		if errors.Is(err, errNoSeries) {
			return NotApplicable, fmt.Sprintf("The comparison has no %s run on tasks.", sel.Name)
		}
		if err != nil {
			return NotApplicable, notOne(err)
		}
		by[sel.Name] = b
	}
	names, unlearned := rep.learnedByAll(stats, all, by)
	if len(names) == 0 {
		return Undecided, fmt.Sprintf("No task is learned at 1x by all five schemes, so none shows generalisation: %s.", strings.Join(unlearned, "; "))
	}
	means := map[string]float64{}
	for _, sel := range all {
		var sum float64
		for _, name := range names {
			if st, ok := at(by[sel.Name][name], rankingRatio); ok && st.Seeds > 0 {
				sum += st.Mean
			}
		}
		means[sel.Name] = sum / float64(len(names))
	}
	verdict := Reproduced
	for _, b := range better {
		for _, w := range worse {
			if !(means[b.Name] > means[w.Name]) {
				verdict = NotReproduced
			}
		}
	}
	var ev []string
	for _, sel := range all {
		ev = append(ev, fmt.Sprintf("%s %s", sel.Name, measure.Percent(means[sel.Name])))
	}
	left := ""
	if len(unlearned) > 0 {
		left = fmt.Sprintf(" Left out, not learned at 1x by all five: %s.", strings.Join(unlearned, "; "))
	}
	return verdict, fmt.Sprintf("Mean exact match over %s at %dx: %s.%s", strings.Join(names, ", "), rankingRatio, strings.Join(ev, ", "), left)
}

// learnedByAll splits the comparison's tasks into those every selector's series learned at 1x
// (learned) and the rest, each with the first series that did not learn it and its score.
func (rep *judging) learnedByAll(stats map[string][]tasks.Stat, sels []selector, by map[string]map[string][]tasks.Stat) (names, unlearned []string) {
	for _, name := range rep.taskNames(stats) {
		why := ""
		for _, sel := range sels {
			one, ok := at(by[sel.Name][name], 1)
			if !ok || one.Seeds == 0 {
				why = fmt.Sprintf("%s: %s not scored at 1x", name, sel.Name)
				break
			}
			if one.Mean < taskSolved {
				why = fmt.Sprintf("%s: %s %s at 1x", name, sel.Name, measure.Percent(one.Mean))
				break
			}
		}
		if why == "" {
			names = append(names, name)
		} else {
			unlearned = append(unlearned, why)
		}
	}
	return names, unlearned
}

// copeCounts is CoPE's claim on the tasks its paper made for it. Its threshold is taskSolved,
// fixed before CoPE joined the task comparison: "solves" past the training sizes is "learned"
// at 2x. The pilot (seed 7, 2000 steps, each task alone) counted 55% of programs at 1x and 21%
// at 2x, and kept flip-flop at 100% at 2x (ALiBi 100%, RoPE 92%): the claim is reported, not
// checked.
var tasksCoPECounts = claim{
	id:        "tasks_cope_counts",
	statement: "CoPE counts and keeps flip-flop past its training sizes, where RoPE and ALiBi do not count (Golovneva et al. 2024)",
	rule:      fmt.Sprintf("CoPE's exact match (mean over seeds) at %dx ≥ %g on counting and on flipflop; plain RoPE's and plain ALiBi's on counting at %dx below it. Undecided where CoPE did not learn counting or flipflop at 1x (≥ %g).", rankingRatio, taskSolved, rankingRatio, taskSolved),
	check:     checkCoPECounts,
	relevant:  with(hasTasks, plainCoPE),
}

var plainCoPE = plain("CoPE", "cope", "npos")

func checkCoPECounts(rep *judging) (Verdict, string) {
	stats, err := rep.taskStats()
	if err != nil {
		return Undecided, err.Error()
	}
	verdict := Reproduced
	var ev []string
	judge := func(sel selector, task string, solved bool) (Verdict, string, bool) {
		by, err := rep.byTask(sel, stats)
		if errors.Is(err, errNoSeries) || (err == nil && by[task] == nil) {
			return NotApplicable, fmt.Sprintf("%s was not scored on %s.", sel.Name, task), false
		}
		if err != nil {
			return NotApplicable, notOne(err), false
		}
		two, ok := at(by[task], rankingRatio)
		if !ok || two.Seeds == 0 {
			return NotApplicable, fmt.Sprintf("%s was not scored on %s at %dx.", sel.Name, task, rankingRatio), false
		}
		if solved {
			// CoPE's claim is on generalisation: it needs the task learned at 1x.
			if v, why := learned(sel.Name, task, by[task]); v != "" {
				return v, why, false
			}
		}
		ev = append(ev, fmt.Sprintf("%s on %s %s at %dx", sel.Name, task, measure.Percent(two.Mean), rankingRatio))
		if (two.Mean >= taskSolved) != solved {
			verdict = NotReproduced
		}
		return Reproduced, "", true
	}
	for _, c := range []struct {
		sel    selector
		task   string
		solved bool
	}{{plainCoPE, "counting", true}, {plainCoPE, "flipflop", true}, {plainRoPE, "counting", false}, {plainALiBi, "counting", false}} {
		if v, why, ok := judge(c.sel, c.task, c.solved); !ok {
			return v, why
		}
	}
	return verdict, strings.Join(ev, "; ") + "."
}
