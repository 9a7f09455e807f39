package compare

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"extrapolate/experiments/config"
	"extrapolate/experiments/measure"
	"extrapolate/experiments/measure/perplexity"
	"extrapolate/experiments/measure/positions"
	"extrapolate/experiments/plot"
)

// plannedReport is a report of a committed comparison's planned runs, each with an empty ok
// result, for what depends on the configs only.
func plannedReport(t *testing.T, name string) *Report {
	t.Helper()
	c, err := LoadPlan(filepath.Join("..", "..", "configs", name+".yaml"), nil)
	if err != nil {
		t.Fatal(err)
	}
	rep := &Report{Comparison: c.Comparison}
	for _, p := range c.Runs(t.TempDir()) {
		rep.Runs = append(rep.Runs, measure.RunResult{Label: p.Label, Seed: p.Seed, Resolved: p.Resolved, Result: &measure.Result{Status: "ok"}})
	}
	rep.aggregate()
	return rep
}

// TestFamiliesOfCommittedComparisons checks the panel each committed series is drawn in, and
// that plain RoPE is the reference.
func TestFamiliesOfCommittedComparisons(t *testing.T) {
	every := map[string]plot.Family{
		"nope": plot.Absolute, "learned": plot.Absolute, "sinusoidal": plot.Absolute,
		"rope": plot.RoPE, "rope_pi": plot.RoPE, "rope_ntk": plot.RoPE, "rope_dynamic_ntk": plot.RoPE,
		"rope_yarn": plot.RoPE, "rope_llama3": plot.RoPE, "rope_partial": plot.RoPE, "xpos": plot.RoPE,
		"alibi": plot.Bias, "t5": plot.Bias, "kerple": plot.Bias, "fire": plot.Bias,
		"rope_nope_mix": plot.Temperature, "swan_layout": plot.Temperature, "nope_logn": plot.Temperature, "rope_logn": plot.Temperature,
		"nope_ssmax": plot.Temperature, "nope_logn_train": plot.Temperature, "rope_logn_train": plot.Temperature,
		"rope_yarn_ft": plot.RoPE, "rope_self_extend": plot.RoPE, "rope_dca": plot.RoPE,
		"fox": plot.Content, "cope": plot.Content, "stickbreaking": plot.Content,
	}
	for _, name := range []string{"compare", "compare_large", "passkey"} {
		rep := plannedReport(t, name)
		got := map[string]plot.Family{}
		for f, idx := range rep.Families() {
			for _, i := range idx {
				got[rep.Series[i].Label] = plot.Family(f)
			}
		}
		for _, s := range rep.Series {
			want, ok := every[s.Label]
			if !ok {
				t.Errorf("%s: no family expected for %s", name, s.Label)
			} else if got[s.Label] != want {
				t.Errorf("%s: %s in %q, want %q", name, s.Label, got[s.Label].Title(), want.Title())
			}
		}
		if r := rep.Reference(); r < 0 || rep.Series[r].Label != "rope" {
			t.Errorf("%s: reference %d, want rope", name, r)
		}
	}
	if rep := plannedReport(t, "compare"); len(rep.Series) != len(rep.Comparison.Runs) {
		t.Errorf("compare has %d series, want one for each of its %d entries", len(rep.Series), len(rep.Comparison.Runs))
	}
}

// TestSeriesStyles checks that every figure of a report gives a label the same style: its
// scheme's, the reference's to plain RoPE, no two series alike.
func TestSeriesStyles(t *testing.T) {
	rep := syntheticFigures(t, t.TempDir(), nil)
	if n := len(rep.Comparison.Runs); len(rep.Series) != n {
		t.Fatalf("%d series, want compare's %d", len(rep.Series), n)
	}
	ref := rep.Reference()
	styles := rep.Styles()
	for i, s := range rep.Series {
		want := rep.SchemeStyleOf(s.Label)
		if i == ref {
			want = plot.ReferenceStyle
		}
		// The perplexity and loss figures take rep.Styles(), the passkey one rep.StyleOf.
		if got := styles[i]; !plot.Same(got, want) || !plot.Same(*rep.StyleOf(s.Label), want) {
			t.Errorf("%s: style %+v, want %+v", s.Label, got, want)
		}
		for j := range i {
			if plot.Same(styles[i], styles[j]) {
				t.Errorf("%s is drawn like %s", s.Label, rep.Series[j].Label)
			}
		}
	}
}

// TestStylesFollowTheScheme checks that a scheme has one style whatever the comparison and the
// order of its series: ALiBi's in compare, in passkey and in compare with its series reversed.
func TestStylesFollowTheScheme(t *testing.T) {
	styleOf := func(rep *Report, label string) plot.Style {
		t.Helper()
		s := rep.StyleOf(label)
		if s == nil {
			t.Fatalf("%s: no series %s", rep.Name, label)
		}
		return *s
	}
	compare, passkey := plannedReport(t, "compare"), plannedReport(t, "passkey")
	reversed := plannedReport(t, "compare")
	slices.Reverse(reversed.Series)
	if reversed.Series[0].Label == compare.Series[0].Label {
		t.Fatal("the series were not reordered")
	}
	alibi := styleOf(compare, "alibi")
	if !plot.Same(alibi, plot.SchemeStyle("alibi")) {
		t.Errorf("alibi in compare: %+v, want the table's %+v", alibi, plot.SchemeStyle("alibi"))
	}
	for _, label := range []string{"alibi", "rope", "rope_yarn", "rope_pi"} {
		want := styleOf(compare, label)
		for _, rep := range []*Report{passkey, reversed} {
			if got := styleOf(rep, label); !plot.Same(got, want) {
				t.Errorf("%s: %+v, in compare %+v", label, got, want)
			}
		}
	}
	// The fine-tuned YaRN run of passkey: YaRN's colour and marker, dashed.
	ft, yarn := styleOf(passkey, "rope_yarn_ft"), styleOf(passkey, "rope_yarn")
	if ft.Color != yarn.Color || ft.Shape != yarn.Shape || ft.Dashes == nil || yarn.Dashes != nil {
		t.Errorf("rope_yarn_ft %+v, rope_yarn %+v: want one colour and marker, the fine-tuned dashed", ft, yarn)
	}
}

// TestComparisonFigures draws the comparison figures of synthetic runs: 21 series in four
// panels, three families (an empty tile), and one. With EXTRAPOLATE_FIGURES set to a folder,
// they are kept there to be looked at.
func TestComparisonFigures(t *testing.T) {
	for _, tc := range []struct {
		name   string
		labels []string
	}{
		{"all", nil},
		{"three", []string{"nope", "rope", "rope_yarn", "alibi", "t5"}},
		{"one", []string{"alibi", "kerple"}},
	} {
		dir := t.TempDir()
		if keep := os.Getenv("EXTRAPOLATE_FIGURES"); keep != "" {
			dir = filepath.Join(keep, tc.name)
		}
		rep := syntheticFigures(t, dir, tc.labels)
		writeSection(t, rep, "perplexity", dir)
		writeSection(t, rep, "loss_by_position", dir)
		for _, f := range []string{perplexity.ComparisonPNG, perplexity.ComparisonSVG, positions.ComparisonPNG, positions.ComparisonSVG} {
			if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
				t.Error(err)
			}
		}
	}
}

// syntheticFigures builds a report of compare's runs, and the two temperatures of training, with
// made-up perplexities and losses by position written under dir; labels, if given, keeps those.
func syntheticFigures(t *testing.T, dir string, labels []string) *Report {
	t.Helper()
	planned := plannedReport(t, "compare")
	runs := slices.Clone(planned.Runs)
	for _, name := range []string{"nope_logn_train", "rope_logn_train"} {
		rc, err := config.LoadResolved(filepath.Join("..", "..", "configs", name+".yaml"), nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, seed := range planned.Comparison.Seeds {
			run := rc.WithSeed(name+"-s"+strconv.FormatUint(seed, 10), seed)
			runs = append(runs, measure.RunResult{Label: name, Seed: seed, Resolved: run})
		}
	}
	rep := &Report{Comparison: planned.Comparison}
	rng := rand.New(rand.NewPCG(1, 2))
	series := map[string]int{}
	for _, r := range runs {
		if labels != nil && !slices.Contains(labels, r.Label) {
			continue
		}
		if _, ok := series[r.Label]; !ok {
			series[r.Label] = len(series)
		}
		r.Dir = filepath.Join(dir, RunsDir, r.Label+"-s"+strconv.FormatUint(r.Seed, 10))
		r.Result = syntheticRun(t, r, series[r.Label], rng)
		rep.Runs = append(rep.Runs, r)
	}
	rep.aggregate()
	return rep
}

// syntheticRun makes up run r's perplexity at 64 to 1024 tokens, trained at 64, rising past
// 64 by the k-th of a few slopes, and its loss by position, each position scored once in each of
// the config's windows, and writes the latter to its folder.
func syntheticRun(t *testing.T, r measure.RunResult, k int, rng *rand.Rand) *measure.Result {
	const trainLen = 64
	c := r.Config()
	slope := 0.06 * float64(k%7)
	res := &measure.Result{Status: "ok", TrainLen: trainLen}
	var pls []positions.Length
	for _, n := range []int{64, 128, 256, 512, 1024} {
		if r.Label == "learned" && n > trainLen {
			res.Lengths = append(res.Lengths, measure.LengthResult{Length: n, Reason: "not applicable by design"})
			pls = append(pls, positions.Length{Length: n, Reason: "not applicable by design"})
			continue
		}
		pl := positions.Length{Length: n, Applicable: true}
		var sum float64
		for p := range n {
			loss := 1.8 + 1.5/math.Sqrt(float64(p+1)) + 0.1*rng.NormFloat64()
			if p >= trainLen {
				loss += slope * math.Log2(float64(p+1)/trainLen)
			}
			pl.Positions = append(pl.Positions, positions.Bucket{From: p, To: p, Tokens: c.Eval.Tokens / n, Loss: loss})
			sum += loss
		}
		pls = append(pls, pl)
		loss := sum / float64(n)
		ppl := math.Exp(loss)
		res.Lengths = append(res.Lengths, measure.LengthResult{Length: n, Applicable: true, Loss: &loss, Perplexity: &ppl, Tokens: c.Eval.Tokens})
	}
	if err := os.MkdirAll(r.Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	f := positionsFile{Name: c.Name, Seed: c.Seed, TrainLen: trainLen, Protocol: c.Eval.Protocol(), Lengths: pls}
	if err := measure.WriteJSON(filepath.Join(r.Dir, positions.RunJSON), f); err != nil {
		t.Fatal(err)
	}
	return res
}

// positionsFile is what the figures read of a run's loss_by_position.json.
type positionsFile struct {
	Name     string             `json:"name"`
	Seed     uint64             `json:"seed"`
	TrainLen int                `json:"train_len"`
	Protocol string             `json:"protocol"`
	Lengths  []positions.Length `json:"lengths"`
}

// writeSection writes a registered measure's section of rep, its figures among its files, into
// dir.
func writeSection(t *testing.T, rep *Report, name, dir string) {
	t.Helper()
	for _, m := range measure.All() {
		if m.Name() != name {
			continue
		}
		s, err := m.(measure.Reporter).Section(&rep.Report)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Write(dir); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Fatalf("no measure %s", name)
}
