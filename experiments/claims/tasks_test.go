package claims

import (
	"path/filepath"
	"testing"

	"extrapolate/experiments/config"
	"extrapolate/experiments/measure"
	"extrapolate/experiments/measure/tasks"
)

// scores are a scheme's exact match on one task at 1x, 2x and 4x.
type scores map[string][3]float64

// taskOrder and schemeOrder are the order of the series taskReport makes.
var (
	taskOrder   = []string{"copy", "flipflop", "niah_single", "counting", "parity", "mqar"}
	schemeOrder = []string{"nope", "t5", "rope", "learned", "sinusoidal", "alibi", "cope", "rope_self_extend", "rope_rerope", "rope_randomized", "rope_drope", "fox", "stickbreaking", "hard_alibi"}
	// variants are the series of schemeOrder with no config of their own: the config they
	// load and what they set on it.
	variants = map[string][2]string{
		"rope_self_extend": {"rope", "position.distance_map={type: self_extend}"},
		"rope_rerope":      {"rope", "position.distance_map={type: rerope}"},
	}
)

// taskReport is a comparison of task runs, a series per scheme and task as configs/tasks.yaml
// has them, three seeds each (the fewest the ranking claims need), with the exact match given
// by task and scheme.
func taskReport(t *testing.T, byTask map[string]scores) *measure.Report {
	t.Helper()
	return seedsReport(t, byTask, 1, 2, 3)
}

// seedsReport is taskReport with the given seeds, each with the same scores.
func seedsReport(t *testing.T, byTask map[string]scores, seeds ...uint64) *measure.Report {
	t.Helper()
	rep := &measure.Report{}
	for _, name := range taskOrder {
		for _, scheme := range schemeOrder {
			exact, ok := byTask[name][scheme]
			if !ok {
				continue
			}
			label := scheme + "_" + name
			file, set := scheme, []string{"task={names: [" + name + "]}"}
			if v, ok := variants[scheme]; ok {
				file, set = v[0], append(set, v[1])
			}
			rc, err := config.LoadResolved(filepath.Join("..", "..", "configs", file+".yaml"), set)
			if err != nil {
				t.Fatal(err)
			}
			res := &measure.Result{Name: label, Status: "ok"}
			var cells []tasks.Cell
			for i, ratio := range []float64{1, 2, 4} {
				e := exact[i]
				cells = append(cells, tasks.Cell{Task: name, Size: int(16 * ratio), Ratio: ratio, Applicable: true, Examples: 100, Exact: int(100 * e), ExactMatch: e})
			}
			if err := res.SetMeasurement("tasks", cells); err != nil {
				t.Fatal(err)
			}
			for _, seed := range seeds {
				rep.Runs = append(rep.Runs, measure.RunResult{Label: label, Seed: seed, Resolved: rc, Result: res})
			}
			rep.Series = append(rep.Series, &measure.Series{Label: label, Position: scheme})
		}
	}
	return rep
}

func judgeTasks(t *testing.T, byTask map[string]scores) map[string]Verdict {
	t.Helper()
	out := map[string]Verdict{}
	for _, r := range Judge(taskReport(t, byTask), nil) {
		out[r.ID] = r.Verdict
	}
	return out
}

// on is the tasks copy and flip-flop with the given scores, and the needle's if given.
func on(copyExact, flipExact scores, needle ...scores) map[string]scores {
	out := map[string]scores{"copy": copyExact, "flipflop": flipExact}
	if len(needle) > 0 {
		out["niah_single"] = needle[0]
	}
	return out
}

// TestTaskClaims checks each task claim's verdict on both sides of its rule, on a comparison
// with a series per scheme and task.
func TestTaskClaims(t *testing.T) {
	goodCopy := scores{"nope": {1, 0.6, 0.2}, "t5": {1, 0.5, 0.1}, "rope": {0.95, 0.05, 0}, "learned": {0.9, 0, 0}, "sinusoidal": {0.92, 0.1, 0}}
	goodFlip := scores{"nope": {1, 0.9, 0.8}, "t5": {1, 0.9, 0.7}, "rope": {1, 0.8, 0.5}, "learned": {1, 0, 0}, "sinusoidal": {1, 0.5, 0.2}}
	with := func(s scores, scheme string, e [3]float64) scores {
		out := scores{}
		for k, x := range s {
			out[k] = x
		}
		out[scheme] = e
		return out
	}
	goodNeedle := scores{"nope": {1, 1, 0.5}, "t5": {1, 0.9, 0.4}, "rope": {1, 0.9, 0.02}, "learned": {1, 0, 0}, "sinusoidal": {1, 0.3, 0}}
	v := judgeTasks(t, on(goodCopy, goodFlip, goodNeedle))
	for _, id := range []string{"tasks_solvable", "tasks_rope_copy_fails", "tasks_flipflop_degrades", "tasks_needle_rope_fails", "tasks_nope_ranking"} {
		if v[id] != Reproduced {
			t.Errorf("%s: %s, want reproduced", id, v[id])
		}
	}
	if _, ok := v["alibi_flat"]; ok {
		t.Error("a perplexity claim was judged on a comparison of task runs")
	}
	if v := judgeTasks(t, on(goodCopy, goodFlip))["tasks_needle_rope_fails"]; v != NotApplicable {
		t.Errorf("tasks_needle_rope_fails without needle runs: %s, want not applicable", v)
	}
	if got := judgeTasks(t, on(goodCopy, goodFlip, with(goodNeedle, "rope", [3]float64{1, 1, 0.11})))["tasks_needle_rope_fails"]; got != NotReproduced {
		t.Errorf("rope finds it at 4x: tasks_needle_rope_fails is %s, want not reproduced", got)
	}
	// A claim on generalisation past the training sizes needs the task learned within them.
	for name, c := range map[string]struct {
		copyExact, flipExact, needle scores
		id                           string
	}{
		"rope misses the needle at 1x": {goodCopy, goodFlip, with(goodNeedle, "rope", [3]float64{0.89, 0.5, 0}), "tasks_needle_rope_fails"},
		"rope never learns flip-flop":  {goodCopy, with(goodFlip, "rope", [3]float64{0.89, 0.5, 0.1}), goodNeedle, "tasks_flipflop_degrades"},
		"rope copies 76% at 1x":        {with(goodCopy, "rope", [3]float64{0.76, 0, 0}), goodFlip, goodNeedle, "tasks_rope_copy_fails"},
		"no task learned by all five":  {with(goodCopy, "learned", [3]float64{0.5, 0, 0}), with(goodFlip, "sinusoidal", [3]float64{0.3, 0, 0}), with(goodNeedle, "t5", [3]float64{0.5, 0, 0}), "tasks_nope_ranking"},
	} {
		if got := judgeTasks(t, on(c.copyExact, c.flipExact, c.needle))[c.id]; got != Undecided {
			t.Errorf("%s: %s is %s, want undecided", name, c.id, got)
		}
	}
	for name, c := range map[string]struct {
		copyExact, flipExact scores
		id                   string
	}{
		"copy learned by none":  {scores{"nope": {0.8, 0.6, 0}, "t5": {0.89, 0.5, 0}, "rope": {0.85, 0, 0}, "learned": {0.5, 0, 0}, "sinusoidal": {0.7, 0, 0}}, goodFlip, "tasks_solvable"},
		"rope copies at 2x":     {with(goodCopy, "rope", [3]float64{1, 0.11, 0}), goodFlip, "tasks_rope_copy_fails"},
		"rope keeps flip-flop":  {goodCopy, with(goodFlip, "rope", [3]float64{1, 0.9, 0.76}), "tasks_flipflop_degrades"},
		"t5 no better":          {with(goodCopy, "t5", [3]float64{1, 0.05, 0}), with(goodFlip, "t5", [3]float64{1, 0.5, 0}), "tasks_nope_ranking"},
		"nope below sinusoidal": {with(goodCopy, "nope", [3]float64{1, 0, 0}), with(goodFlip, "nope", [3]float64{1, 0.55, 0}), "tasks_nope_ranking"},
	} {
		if got := judgeTasks(t, on(c.copyExact, c.flipExact))[c.id]; got != NotReproduced {
			t.Errorf("%s: %s is %s, want not reproduced", name, c.id, got)
		}
	}
}

// TestCountingClaim checks tasks_counting_fails on both sides of its rule: RoPE and ALiBi below
// the solved mark at 1x and at most countingFailed at 2x.
func TestCountingClaim(t *testing.T) {
	goodCopy := scores{"nope": {1, 0.6, 0.2}, "t5": {1, 0.5, 0.1}, "rope": {0.95, 0.05, 0}, "learned": {0.9, 0, 0}, "sinusoidal": {0.92, 0.1, 0}}
	goodFlip := scores{"nope": {1, 0.9, 0.8}, "t5": {1, 0.9, 0.7}, "rope": {1, 0.8, 0.5}, "learned": {1, 0, 0}, "sinusoidal": {1, 0.5, 0.2}}
	counting := func(rope, alibi [3]float64) map[string]scores {
		tasks := on(goodCopy, goodFlip)
		tasks["counting"] = scores{"nope": {0.5, 0.3, 0.1}, "rope": rope, "alibi": alibi}
		return tasks
	}
	for name, c := range map[string]struct {
		rope, alibi [3]float64
		want        Verdict
	}{
		"both fail":              {[3]float64{0.55, 0.22, 0.1}, [3]float64{0.5, 0.36, 0.2}, Reproduced},
		"at the limits":          {[3]float64{0.89, 0.5, 0.4}, [3]float64{0.89, 0.5, 0.5}, Reproduced},
		"rope solves it at 1x":   {[3]float64{0.9, 0.3, 0.1}, [3]float64{0.5, 0.36, 0.2}, NotReproduced},
		"alibi keeps it at 2x":   {[3]float64{0.55, 0.22, 0.1}, [3]float64{0.6, 0.51, 0.2}, NotReproduced},
		"rope counts at 2x only": {[3]float64{0.55, 0.6, 0.1}, [3]float64{0.5, 0.36, 0.2}, NotReproduced},
	} {
		if got := judgeTasks(t, counting(c.rope, c.alibi))["tasks_counting_fails"]; got != c.want {
			t.Errorf("%s: tasks_counting_fails is %s, want %s", name, got, c.want)
		}
	}
	if got := judgeTasks(t, on(goodCopy, goodFlip))["tasks_counting_fails"]; got != NotApplicable {
		t.Errorf("without counting runs: tasks_counting_fails is %s, want not applicable", got)
	}
	noALiBi := counting([3]float64{0.55, 0.22, 0.1}, [3]float64{})
	delete(noALiBi["counting"], "alibi")
	if got := judgeTasks(t, noALiBi)["tasks_counting_fails"]; got != NotApplicable {
		t.Errorf("without an ALiBi counting run: tasks_counting_fails is %s, want not applicable", got)
	}
}

// TestCoPECountsClaim checks tasks_cope_counts on both sides of its rule: CoPE at 2x at least
// taskSolved on counting and on flip-flop, RoPE and ALiBi below it on counting.
func TestCoPECountsClaim(t *testing.T) {
	flip := scores{"rope": {1, 0.9, 0.1}, "alibi": {1, 1, 0.97}}
	tasksWith := func(cope, copeFlip, rope [3]float64) map[string]scores {
		f := scores{"rope": flip["rope"], "alibi": flip["alibi"], "cope": copeFlip}
		return map[string]scores{"flipflop": f, "counting": {"rope": rope, "alibi": {0.5, 0.36, 0.2}, "cope": cope}}
	}
	for name, c := range map[string]struct {
		cope, copeFlip, rope [3]float64
		want                 Verdict
	}{
		"cope counts":           {[3]float64{1, 0.9, 0.5}, [3]float64{1, 1, 0.9}, [3]float64{0.55, 0.22, 0.1}, Reproduced},
		"cope does not count":   {[3]float64{1, 0.21, 0.1}, [3]float64{1, 1, 0.93}, [3]float64{0.55, 0.22, 0.1}, NotReproduced},
		"cope never learns it":  {[3]float64{0.55, 0.21, 0.1}, [3]float64{1, 1, 0.93}, [3]float64{0.55, 0.22, 0.1}, Undecided},
		"cope loses flip-flop":  {[3]float64{1, 0.95, 0.5}, [3]float64{1, 0.89, 0.5}, [3]float64{0.55, 0.22, 0.1}, NotReproduced},
		"rope counts at 2x too": {[3]float64{1, 0.95, 0.5}, [3]float64{1, 1, 0.9}, [3]float64{0.95, 0.9, 0.1}, NotReproduced},
	} {
		if got := judgeTasks(t, tasksWith(c.cope, c.copeFlip, c.rope))["tasks_cope_counts"]; got != c.want {
			t.Errorf("%s: tasks_cope_counts is %s, want %s", name, got, c.want)
		}
	}
	if _, judged := judgeTasks(t, map[string]scores{"counting": {"rope": {0.5, 0.2, 0.1}}})["tasks_cope_counts"]; judged {
		t.Error("without CoPE runs: tasks_cope_counts judged, want it left out")
	}
}
