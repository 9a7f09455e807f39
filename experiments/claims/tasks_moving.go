package claims

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"extrapolate/experiments/measure"
	"extrapolate/experiments/measure/tasks"
)

// Claims on tasks about positions that move (issue 36): a RoPE model scored through a distance
// map, RoPE trained at drawn position ids, and DroPE. Each threshold is the wording of the claim
// in the terms of the task claims before it (taskSolved for "finds", greater for "beats" and
// "raises", as the ranking's rule), fixed before their committed runs from pilots of seed 7,
// which no committed comparison trains (2000 steps, batch 32, each task alone, exact match at
// 1x / 2x / 3x / 4x):
//
//	niah_single      plain RoPE          100 / 100 /  54 /  20%
//	                 through self_extend 100 / 100 / 100 / 100%
//	                 through rerope      100 / 100 /  97 /  92%
//	                 randomized ids      100 /  84 /  38 /   8%
//	flipflop         plain RoPE          100 /  92 /  25 /  11%
//	                 randomized ids      100 / 100 /  88 /  75%
//	niah_multivalue  plain RoPE           99 /   0 /   0 /   0%
//	                 plain NoPE          100 /   1 /   0 /   0%
//	                 DroPE                 0 /   0 /   0 /   0%
//
// So Self-Extend's claim is checked (100% at 4x against a limit of 90%); ReRoPE's is reported,
// its pilot 2 points above the limit; randomized ids' pilot mean at 2x (92%) is below plain
// RoPE's (96%), and DroPE's 250 steps without positions (its paper's 12.5%) left no needle
// found even at 1x (training loss 1.43 at the end, from 6e-5 before the drop): both reported
// as they fall. Randomized RoPE learned no copy (0% at 0.5x, 6000 steps), so it is judged on
// flip-flop and niah_single; DroPE on the paper's multi-value and multi-query needles, since
// this model does not learn the multi-key one (RoPE 2% at 1x).

// The series these claims are about.
var (
	// taskSelfExtended and taskReRoPE: plain RoPE trained as it is and scored through a map.
	taskSelfExtended = mapped("RoPE through Self-Extend", "self_extend")
	taskReRoPE       = mapped("RoPE through ReRoPE", "rerope", "leaky_rerope")
	// ropeRandomized is RoPE trained (and so scored) at randomized position ids.
	ropeRandomized = selector{Name: "RoPE at randomized positions", Scheme: "rope", Scaling: unset, Temperature: unset, Finetune: unset, DroPE: unset, Map: unset, Window: unset, Positions: is("randomized"), Params: []string{"base"}}
	// ropeDroPE is RoPE dropped for the end of training (train.drope), nothing else varied.
	ropeDroPE = selector{Name: "DroPE", Scheme: "rope", Scaling: unset, Temperature: unset, Finetune: unset, DroPE: set, Map: unset, Window: unset, Positions: unset, Params: []string{"base"}}
)

// mapRatio is the size the map claims are judged at: 4x, passkey_self_extend's.
const mapRatio = 4

var tasksSelfExtendNeedle = claim{
	id:        "tasks_self_extend_needle",
	statement: "Self-Extend finds a needle at 4x on a RoPE model with no tuning, where plain RoPE does not (Jin et al. 2024)",
	rule:      fmt.Sprintf("RoPE through self_extend: exact match on niah_single (mean over seeds) ≥ %g at %dx; plain RoPE's below %g there. Undecided where plain RoPE does not find the needle at 1x (≥ %g).", taskSolved, mapRatio, taskSolved, taskSolved),
	check:     func(rep *judging) (Verdict, string) { return rep.mapFindsNeedle(taskSelfExtended) },
	relevant:  with(hasTasks, taskSelfExtended),
}

var tasksReRoPENeedle = claim{
	id:        "tasks_rerope_needle",
	statement: "ReRoPE's capped distances find a needle at 4x on a RoPE model with no tuning, where plain RoPE does not (Su 2023)",
	rule:      fmt.Sprintf("RoPE through rerope or leaky_rerope: exact match on niah_single (mean over seeds) ≥ %g at %dx; plain RoPE's below %g there. Undecided where plain RoPE does not find the needle at 1x (≥ %g).", taskSolved, mapRatio, taskSolved, taskSolved),
	check:     func(rep *judging) (Verdict, string) { return rep.mapFindsNeedle(taskReRoPE) },
	relevant:  with(hasTasks, taskReRoPE),
}

// mapFindsNeedle judges a map's needle claim: sel's series on niah_single at mapRatio, against
// plain RoPE's.
func (rep *judging) mapFindsNeedle(sel selector) (Verdict, string) {
	var four [2]tasks.Stat
	for i, s := range []selector{sel, plainRoPE} {
		sts, v, why := rep.on(s, "niah_single")
		if sts == nil {
			return v, why
		}
		if s.Name == plainRoPE.Name {
			// A map extends what the model learned: plain RoPE must find the needle at 1x.
			if v, why := learned(s.Name, "niah_single", sts); v != "" {
				return v, why
			}
		}
		st, ok := at(sts, mapRatio)
		if !ok || st.Seeds == 0 {
			return NotApplicable, fmt.Sprintf("%s was not scored on niah_single at %dx.", capitalise(s.Name), mapRatio)
		}
		four[i] = st
	}
	verdict := Reproduced
	if four[0].Mean < taskSolved || four[1].Mean >= taskSolved {
		verdict = NotReproduced
	}
	return verdict, fmt.Sprintf("On niah_single at %dx: %s %s, plain RoPE %s.", mapRatio, sel.Name, measure.Percent(four[0].Mean), measure.Percent(four[1].Mean))
}

var tasksRandomizedHelps = claim{
	id:        "tasks_randomized_helps",
	statement: "Randomized position ids raise RoPE's accuracy past its training sizes (Ruoss et al. 2023)",
	rule:      fmt.Sprintf("over the tasks RoPE at randomized positions trained on that both it and plain RoPE learned at 1x (≥ %g), the mean of its exact match at %dx (mean over seeds) above plain RoPE's on the same tasks. Undecided where there is no such task.", taskSolved, rankingRatio),
	check:     checkRandomized,
	relevant:  with(hasTasks, ropeRandomized),
	seeds:     rankingSeeds,
}

func checkRandomized(rep *judging) (Verdict, string) {
	return rep.beatsOnItsTasks(ropeRandomized, "", plainRoPE)
}

var tasksDroPENeedles = claim{
	id:        "tasks_drope_needles",
	statement: "DroPE beats RoPE and NoPE on needles at 2x the training length (Gelberg et al. 2025)",
	rule:      fmt.Sprintf("over the niah_ tasks DroPE trained on that DroPE, plain RoPE and plain NoPE all learned at 1x (≥ %g), the mean of its exact match at %dx (mean over seeds) above plain RoPE's and plain NoPE's. Undecided where there is no such task.", taskSolved, rankingRatio),
	check:     checkDroPENeedles,
	relevant:  with(hasTasks, ropeDroPE),
	seeds:     rankingSeeds,
}

func checkDroPENeedles(rep *judging) (Verdict, string) {
	return rep.beatsOnItsTasks(ropeDroPE, "niah_", plainRoPE, plainNoPE)
}

// beatsOnItsTasks judges sel against refs at rankingRatio on every task sel was scored on
// whose name starts with prefix: the mean over those tasks of sel's exact match above each
// ref's mean over the same tasks. A ref not scored on one of them leaves the claim not
// applicable.
func (rep *judging) beatsOnItsTasks(sel selector, prefix string, refs ...selector) (Verdict, string) {
	stats, err := rep.taskStats()
	if err != nil {
		return Undecided, err.Error()
	}
	mine, err := rep.byTask(sel, stats)
	if err != nil {
		return NotApplicable, notOneOr(err, fmt.Sprintf("%s was not scored on a task.", capitalise(sel.Name)))
	}
	var names []string
	for _, name := range rep.taskNames(stats) {
		if mine[name] != nil && strings.HasPrefix(name, prefix) {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return NotApplicable, fmt.Sprintf("%s was not scored on a %s task.", capitalise(sel.Name), strings.TrimSuffix(prefix, "_"))
	}
	// Generalisation is judged on the tasks every scheme compared learned at 1x.
	by := map[string]map[string][]tasks.Stat{sel.Name: mine}
	for _, ref := range refs {
		b, err := rep.byTask(ref, stats)
		if err != nil {
			return NotApplicable, notOneOr(err, fmt.Sprintf("%s was not scored on a task.", capitalise(ref.Name)))
		}
		by[ref.Name] = b
	}
	var kept, unlearned []string
	for _, name := range names {
		why := ""
		for _, s := range append([]selector{sel}, refs...) {
			v, w := learned(s.Name, name, by[s.Name][name])
			if v == NotApplicable {
				return v, w
			}
			if v != "" {
				why = strings.TrimSuffix(w, ".")
				break
			}
		}
		if why == "" {
			kept = append(kept, name)
		} else {
			unlearned = append(unlearned, why)
		}
	}
	if len(kept) == 0 {
		return Undecided, fmt.Sprintf("No task of the claim is learned at 1x by every scheme it compares: %s.", strings.Join(unlearned, "; "))
	}
	names = kept
	mean := func(s selector, by map[string][]tasks.Stat) (float64, []string, error) {
		var sum float64
		var ev []string
		for _, name := range names {
			st, ok := at(by[name], rankingRatio)
			if !ok || st.Seeds == 0 {
				return 0, nil, fmt.Errorf("%s was not scored on %s at %dx", capitalise(s.Name), name, rankingRatio)
			}
			sum += st.Mean
			ev = append(ev, fmt.Sprintf("%s %s", name, measure.Percent(st.Mean)))
		}
		return sum / float64(len(names)), ev, nil
	}
	m, ev, err := mean(sel, mine)
	if err != nil {
		return NotApplicable, err.Error() + "."
	}
	verdict := Reproduced
	parts := []string{fmt.Sprintf("%s %s (%s)", sel.Name, measure.Percent(m), strings.Join(ev, ", "))}
	for _, ref := range refs {
		r, rev, err := mean(ref, by[ref.Name])
		if err != nil {
			return NotApplicable, err.Error() + "."
		}
		if !(m > r) {
			verdict = NotReproduced
		}
		parts = append(parts, fmt.Sprintf("%s %s (%s)", ref.Name, measure.Percent(r), strings.Join(rev, ", ")))
	}
	left := ""
	if len(unlearned) > 0 {
		left = fmt.Sprintf(" Left out, not learned at 1x: %s.", strings.Join(unlearned, "; "))
	}
	return verdict, fmt.Sprintf("Mean exact match at %dx: %s.%s", rankingRatio, strings.Join(parts, "; "), left)
}

// notOneOr is the evidence for a byTask error: notOne's for series picked together, else none.
func notOneOr(err error, none string) string {
	if errors.Is(err, errNoSeries) {
		return none
	}
	return notOne(err)
}

// capitalise puts a selector's name at the start of a sentence.
func capitalise(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	return string(unicode.ToUpper(r)) + s[n:]
}
