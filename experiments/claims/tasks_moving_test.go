package claims

import "testing"

// TestMapNeedleClaims checks tasks_self_extend_needle and tasks_rerope_needle on both sides of
// their rule: the map at 4x at least taskSolved on niah_single, plain RoPE below it.
func TestMapNeedleClaims(t *testing.T) {
	for name, c := range map[string]struct {
		mapped, rope [3]float64
		want         Verdict
	}{
		"the map finds it":       {[3]float64{1, 1, 0.9}, [3]float64{1, 1, 0.2}, Reproduced},
		"the map misses it":      {[3]float64{1, 1, 0.89}, [3]float64{1, 1, 0.2}, NotReproduced},
		"plain RoPE finds it":    {[3]float64{1, 1, 1}, [3]float64{1, 1, 0.9}, NotReproduced},
		"plain RoPE just misses": {[3]float64{1, 1, 1}, [3]float64{1, 1, 0.89}, Reproduced},
	} {
		for _, m := range []struct{ scheme, id string }{{"rope_self_extend", "tasks_self_extend_needle"}, {"rope_rerope", "tasks_rerope_needle"}} {
			v := judgeTasks(t, map[string]scores{"niah_single": {"rope": c.rope, m.scheme: c.mapped}})
			if v[m.id] != c.want {
				t.Errorf("%s: %s is %s, want %s", name, m.id, v[m.id], c.want)
			}
		}
	}
	v := judgeTasks(t, map[string]scores{"niah_single": {"rope": {1, 1, 0.2}}})
	for _, id := range []string{"tasks_self_extend_needle", "tasks_rerope_needle"} {
		if _, judged := v[id]; judged {
			t.Errorf("without runs through a map: %s judged, want it left out", id)
		}
	}
	v = judgeTasks(t, map[string]scores{"niah_single": {"rope_self_extend": {1, 1, 1}}, "copy": {"rope": {1, 0, 0}}})
	if v["tasks_self_extend_needle"] != NotApplicable {
		t.Errorf("without plain RoPE on niah_single: %s, want not applicable", v["tasks_self_extend_needle"])
	}
}

// TestRandomizedClaim checks tasks_randomized_helps: the mean over the tasks randomized RoPE
// trained on, at 2x, above plain RoPE's on the same tasks, and only those tasks.
func TestRandomizedClaim(t *testing.T) {
	for name, c := range map[string]struct {
		tasks map[string]scores
		want  Verdict
	}{
		"raises the mean": {map[string]scores{
			"flipflop":    {"rope": {1, 0.7, 0.3}, "rope_randomized": {1, 1, 0.8}},
			"niah_single": {"rope": {1, 1, 0.2}, "rope_randomized": {1, 0.8, 0.1}},
		}, Reproduced},
		"lowers the mean": {map[string]scores{
			"flipflop":    {"rope": {1, 0.9, 0.3}, "rope_randomized": {1, 1, 0.8}},
			"niah_single": {"rope": {1, 1, 0.2}, "rope_randomized": {1, 0.8, 0.1}},
		}, NotReproduced},
		"equal is not raised": {map[string]scores{
			"flipflop": {"rope": {1, 0.7, 0.3}, "rope_randomized": {1, 0.7, 0.9}},
		}, NotReproduced},
		"other tasks do not count": {map[string]scores{
			"flipflop": {"rope": {1, 0.7, 0.3}, "rope_randomized": {1, 0.8, 0.3}},
			"copy":     {"rope": {1, 0, 0}},
		}, Reproduced},
		"no plain RoPE on its task": {map[string]scores{
			"flipflop": {"rope_randomized": {1, 0.8, 0.3}},
			"copy":     {"rope": {1, 0, 0}},
		}, NotApplicable},
	} {
		if got := judgeTasks(t, c.tasks)["tasks_randomized_helps"]; got != c.want {
			t.Errorf("%s: tasks_randomized_helps is %s, want %s", name, got, c.want)
		}
	}
}

// TestDroPEClaim checks tasks_drope_needles: DroPE above plain RoPE and plain NoPE at 2x over
// the needles it trained on, its other tasks left out.
func TestDroPEClaim(t *testing.T) {
	needles := func(drope, rope, nope [3]float64) map[string]scores {
		return map[string]scores{
			"niah_single": {"rope": rope, "nope": nope, "rope_drope": drope},
			"copy":        {"rope": {1, 0.9, 0.9}, "nope": {1, 0.9, 0.9}, "rope_drope": {1, 0, 0}},
		}
	}
	for name, c := range map[string]struct {
		drope, rope, nope [3]float64
		want              Verdict
	}{
		"beats both":       {[3]float64{1, 0.5, 0.1}, [3]float64{1, 0.1, 0}, [3]float64{1, 0.4, 0}, Reproduced},
		"ties with NoPE":   {[3]float64{1, 0.4, 0.1}, [3]float64{1, 0.1, 0}, [3]float64{1, 0.4, 0}, NotReproduced},
		"below plain RoPE": {[3]float64{1, 0.5, 0.1}, [3]float64{1, 0.6, 0}, [3]float64{1, 0.4, 0}, NotReproduced},
	} {
		if got := judgeTasks(t, needles(c.drope, c.rope, c.nope))["tasks_drope_needles"]; got != c.want {
			t.Errorf("%s: tasks_drope_needles is %s, want %s", name, got, c.want)
		}
	}
	if got := judgeTasks(t, map[string]scores{"copy": {"rope": {1, 0, 0}, "nope": {1, 0, 0}, "rope_drope": {1, 1, 1}}})["tasks_drope_needles"]; got != NotApplicable {
		t.Errorf("DroPE on no needle: tasks_drope_needles is %s, want not applicable", got)
	}
}

// TestPerplexityClaimsLeaveTasksAlone checks that the perplexity claims of the content schemes
// and the distance maps are not judged on a comparison whose runs all train on tasks, as the
// other perplexity claims are not: those models never see the corpus.
func TestPerplexityClaimsLeaveTasksAlone(t *testing.T) {
	v := judgeTasks(t, map[string]scores{
		"flipflop":    {"rope": {1, 0.7, 0.3}, "fox": {1, 1, 1}, "stickbreaking": {1, 1, 1}},
		"niah_single": {"rope": {1, 1, 0.2}, "rope_rerope": {1, 1, 0.9}},
	})
	for _, id := range []string{"fox_beats_rope", "stickbreaking_flat", "rerope_flat", "alibi_flat"} {
		if got, judged := v[id]; judged {
			t.Errorf("%s judged on task runs: %s", id, got)
		}
	}
	if _, judged := v["tasks_rerope_needle"]; !judged {
		t.Error("tasks_rerope_needle not judged")
	}
}
