package compare

import (
	"bytes"
	"fmt"
	"maps"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"extrapolate/experiments/claims"
	"extrapolate/experiments/config"
	"extrapolate/experiments/measure"
	"extrapolate/experiments/training"
	"extrapolate/internal/inputerr"
)

// Report is a finished comparison.
type Report struct {
	// Report is the runs and their aggregate, which the measures' sections read; its fields
	// come first in the comparison's JSON.
	measure.Report
	Comparison *Config         `json:"-"`
	Claims     []claims.Result `json:"claims"`
	// Points holds, for a comparison with a grid, each point's report; the others are empty.
	Points []*PointReport `json:"-"`
	// Part says the report is of a part of the comparison (-runs): a checked claim whose runs
	// the part leaves out is not judged there, and does not fail.
	Part bool `json:"-"`

	// sections are the measures' sections, made from the runs' files when the report is: writing
	// it reads nothing. A grid's are those across its points (measure.GridReporter).
	sections []measure.Section
}

// newReport begins a comparison's report, generated now, its runs to be added.
func newReport(c *Config, command string) *Report {
	return &Report{Report: measure.Report{Name: c.Name, Seeds: c.Seeds, Command: command, Generated: time.Now().UTC()}, Comparison: c}
}

// aggregate computes the series over seeds and names plain RoPE among them, the reference of
// the claims and of every figure: the claims know what plain RoPE is, the figures below them
// draw it.
func (rep *Report) aggregate() {
	rep.Aggregate()
	rep.PlainRoPE = claims.PlainRoPE(&rep.Report)
}

// write saves the comparison's JSON, each measure's section (its tables and figures) and
// REPORT.md.
func (rep *Report) write(dir string) error {
	if err := measure.WriteJSON(filepath.Join(dir, ComparisonJSON), rep); err != nil {
		return err
	}
	for _, s := range rep.sections {
		if err := s.Write(dir); err != nil {
			return err
		}
	}
	return measure.WriteFile(filepath.Join(dir, ReportFile), rep.markdown(rep.sections))
}

// measureSections gathers the registered measures' sections of the report, in the registry's
// order. A section aggregates what the runs' files hold, which it reads and checks: its error is
// the input's fault, a run file that is missing or damaged.
func (rep *Report) measureSections() ([]measure.Section, error) {
	var out []measure.Section
	for _, m := range measure.All() {
		s, err := measure.SectionOf(m, &rep.Report)
		if err != nil {
			return nil, inputerr.Wrap(fmt.Errorf("%s: %w", m.Name(), err))
		}
		if s != nil {
			out = append(out, s)
		}
	}
	return out, nil
}

// gridSections gathers the registered measures' sections of a grid's report, across its points
// (measure.GridReporter), in the registry's order; their errors are the input's fault, as a
// point's are.
func gridSections(points []*PointReport) ([]measure.Section, error) {
	gp := make([]measure.GridPoint, len(points))
	for i, p := range points {
		gp[i] = measure.GridPoint{Name: p.Name, Report: &p.Report.Report}
	}
	var out []measure.Section
	for _, m := range measure.All() {
		s, err := measure.GridSectionOf(m, gp)
		if err != nil {
			return nil, inputerr.Wrap(fmt.Errorf("%s: %w", m.Name(), err))
		}
		if s != nil {
			out = append(out, s)
		}
	}
	return out, nil
}

func (rep *Report) markdown(sections []measure.Section) []byte {
	var b bytes.Buffer
	c := rep.Comparison
	first := rep.Runs[0].Config()
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p("# Comparison: %s\n\n", c.Name)
	var seeds []string
	for _, s := range c.Seeds {
		seeds = append(seeds, strconv.FormatUint(s, 10))
	}
	res0 := rep.Runs[0].Result
	p("Produced by `%s` on %s with %s (%s/%s, %d CPUs).\n", rep.Command, rep.Generated.Format("2006-01-02"), res0.GoVersion, runtime.GOOS, runtime.GOARCH, runtime.NumCPU())
	p("Every run trains %s for %s of %d sequences at %s on %s, with seeds %s, and scores the same %d validation tokens at every length, in %s.\n\n",
		rep.modelPhrase(), rep.spread(func(c config.Config) int { return c.Train.Steps }, "%s steps", "%s steps (each run's in Runs)"),
		first.Train.BatchSize, rep.spread(func(c config.Config) int { return c.Train.SeqLen }, "length %s", "lengths %s (each run its own)"), rep.trainData(res0.Corpus), strings.Join(seeds, ", "), first.Eval.Tokens, first.Eval.Protocol())
	rep.verdicts(&b)
	if src := rep.sources(); len(src) > 0 {
		p("How the position schemes' own weights are set and trained, each choice with its source:\n\n")
		for _, line := range src {
			p("- %s\n", line)
		}
		p("\n")
	}
	for _, s := range sections {
		s.Markdown(&b)
	}
	// "checked": listed in the comparison's claims, so that the command fails when it does not
	// reproduce (CI runs the ci comparison; the others are checked when someone runs them).
	p("\n## Claims\n\nA claim marked checked is in this comparison's `claims:` list: the command exits 1 when it is not reproduced, or not applicable to the whole comparison; an undecided claim says what it lacks and does not fail.\n\n| # | claim | verdict | checked |\n|---|---|---|---|\n")
	for i, cl := range rep.Claims {
		checked := "no"
		for _, id := range c.Claims {
			if id == cl.ID {
				checked = "yes"
				if rep.Part && cl.Verdict == claims.NotApplicable {
					checked = "not judged in this part: its runs are left out"
				}
			}
		}
		p("| %d | %s | **%s** | %s |\n", i+1, cl.Statement, cl.Verdict, checked)
	}
	for i, cl := range rep.Claims {
		p("\n### %d. %s\n\n%s\n\nRule: %s\n", i+1, cl.Statement, cl.Evidence, cl.Rule)
	}

	sizes := !rep.sameModel()
	if sizes {
		p("\n## Runs\n\n| run | seed | model | steps | train time (s) | final train loss | status |\n|---|---:|---|---:|---:|---:|---|\n")
	} else {
		p("\n## Runs\n\n| run | seed | steps | train time (s) | final train loss | status |\n|---|---:|---:|---:|---:|---|\n")
	}
	shared := rep.sharedTraining()
	for i, r := range rep.Runs {
		res := r.Result
		status := string(res.Status)
		if res.Error != "" {
			status += ": " + res.Error
		}
		train := fmt.Sprintf("%.1f", res.TrainSeconds)
		if shared[i] != "" {
			// RoPE scalings apply when evaluating: this run took its weights from an earlier one.
			train = "(" + shared[i] + "'s)"
		}
		model := ""
		if sizes {
			model = " " + modelSize(r.Config().Model) + " |"
		}
		p("| %s | %d |%s %d | %s | %.3f | %s |\n", r.Label, r.Seed, model, res.Steps, train, res.FinalTrainLoss, status)
	}
	p("\nTraining and evaluation took %.0f s of computation in all, on %s; runs that differ from an earlier one only in %s applied at evaluation reuse its training, and show its name.\n", rep.computeSeconds(), processors(rep.Runs), rep.evaluationOnly())
	return b.Bytes()
}

// evaluationOnly says what a run may differ in and still reuse an earlier run's training: a RoPE
// scaling, and a distance map where the comparison has one.
func (rep *Report) evaluationOnly() string {
	for _, r := range rep.Runs {
		if r.Config().Position.DistanceMap != nil {
			return "a RoPE scaling or a distance map"
		}
	}
	return "a RoPE scaling"
}

// sharedTraining names, for each run, the earlier run whose training it reused ("" for a run
// that trained its own weights): RoPE scalings and distance maps apply when evaluating, so runs
// that differ only in one train the same weights once.
func (rep *Report) sharedTraining() []string {
	out := make([]string, len(rep.Runs))
	trainedBy := map[string]string{} // training key → the run that trained it
	for i, r := range rep.Runs {
		key := training.Key(r.Config())
		if by, ok := trainedBy[key]; ok && key != "" {
			out[i] = by
		} else {
			trainedBy[key] = fmt.Sprintf("%s-s%d", r.Label, r.Seed)
		}
	}
	return out
}

// computeSeconds is the time the runs took to train and evaluate, each shared training once.
// processors names the processors the runs record, "; " between them, or says none did.
func processors(runs []measure.RunResult) string {
	cpus := map[string]bool{}
	for _, r := range runs {
		if r.Result != nil && r.Result.CPU != "" {
			cpus[r.Result.CPU] = true
		}
	}
	if len(cpus) == 0 {
		return "processors not recorded"
	}
	return strings.Join(slices.Sorted(maps.Keys(cpus)), "; ")
}

func (rep *Report) computeSeconds() float64 {
	total := 0.0
	for i, shared := range rep.sharedTraining() {
		res := rep.Runs[i].Result
		if shared == "" {
			total += res.TrainSeconds
		}
		total += res.EvalSeconds
	}
	return total
}

// Summary is the perplexity table and the verdicts, for the terminal; for a grid, the verdicts
// and deciding ratios by point.
func (rep *Report) Summary() string {
	var b strings.Builder
	if len(rep.Points) > 0 {
		fmt.Fprintf(&b, "%-26s", "claim")
		for _, pt := range rep.Points {
			fmt.Fprintf(&b, " %-22s", pt.Name)
		}
		b.WriteByte('\n')
		for _, cl := range rep.gridClaims() {
			fmt.Fprintf(&b, "%-26s", cl.ID)
			for _, pt := range rep.Points {
				cell := "–"
				if r, ok := pt.claimAt(cl.ID); ok {
					cell = verdictCell(r)
				}
				fmt.Fprintf(&b, " %-22s", cell)
			}
			b.WriteByte('\n')
		}
		for _, pt := range rep.Points {
			if len(pt.Failed) > 0 {
				fmt.Fprintf(&b, "%s: %s\n", pt.Name, pt.runsCell())
			}
		}
		return b.String()
	}
	if rep.tasksOnly() {
		// The models never saw the corpus: their perplexity on it is no result (issue 49).
		b.WriteString("every run trained on tasks, not the corpus: its results are the tasks' exact match, in REPORT.md\n")
	} else {
		rep.perplexityTable(&b)
	}
	for _, c := range rep.Claims {
		fmt.Fprintf(&b, "%-24s %s\n", c.ID, c.Verdict)
	}
	return b.String()
}

// perplexityTable is the terminal's table of perplexity by length, a series a line.
func (rep *Report) perplexityTable(b *strings.Builder) {
	fmt.Fprintf(b, "%-22s", "perplexity")
	for _, n := range rep.Lengths {
		fmt.Fprintf(b, " %15s", fmt.Sprintf("%d (%s)", n, measure.Ratio(n, rep.TrainLen)))
	}
	b.WriteByte('\n')
	for _, s := range rep.Series {
		fmt.Fprintf(b, "%-22s", s.Label)
		for _, st := range s.Stats {
			fmt.Fprintf(b, " %15s", measure.FormatStat(st))
		}
		b.WriteByte('\n')
	}
}

// Failed lists the claims the comparison checks that were not reproduced; for a grid, at any
// point, the point's name before the claim's id. An undecided claim (the models lack what it
// needs, or a number is not finite) does not fail: the report says why it is undecided. Nor,
// in a part of the comparison, does a claim not applicable there (its runs were left out).
func (rep *Report) Failed() []claims.Result {
	var out []claims.Result
	for _, pt := range rep.Points {
		for _, f := range pt.Report.Failed() {
			f.ID = pt.Name + ": " + f.ID
			out = append(out, f)
		}
	}
	for _, id := range rep.Comparison.Claims {
		for _, c := range rep.Claims {
			if c.ID == id && !rep.passes(c.Verdict) {
				out = append(out, c)
			}
		}
	}
	return out
}

// verdicts opens the report with the claims it judged, a line each, before the numbers behind
// them (the Claims section at the end gives each one's evidence and rule); claims not
// applicable to its runs are left to that section.
func (rep *Report) verdicts(b *bytes.Buffer) {
	var rows []string
	for i, cl := range rep.Claims {
		if cl.Verdict == claims.NotApplicable {
			continue
		}
		v := string(cl.Verdict)
		if slices.Contains(rep.Comparison.Claims, cl.ID) {
			v += ", checked"
		}
		rows = append(rows, fmt.Sprintf("| %d | %s | %s |\n", i+1, cl.Statement, v))
	}
	if len(rows) == 0 {
		return
	}
	fmt.Fprintf(b, "## Verdicts\n\nThe claims this comparison's runs judge; each one's numbers and rule are under [Claims](#claims), numbered alike.\n\n| # | claim | verdict |\n|---|---|---|\n%s\n", strings.Join(rows, ""))
}

// passes says whether a checked claim of this verdict lets the command succeed.
func (rep *Report) passes(v claims.Verdict) bool {
	return v == claims.Reproduced || v == claims.Undecided || rep.Part && v == claims.NotApplicable
}

// judge gives the report the claims' verdicts on its aggregate, those of the comparison's
// claims: list among them.
func (rep *Report) judge() {
	rep.Claims = claims.Judge(&rep.Report, rep.Comparison.Claims)
}

// spread formats a setting of the runs' configs: one value in one, the range of several in
// many, so that a comparison whose runs train for different steps or at different lengths (a
// task comparison: each task its own window) says so instead of giving the first run's.
func (rep *Report) spread(of func(config.Config) int, one, many string) string {
	lo, hi := rep.extent(func(r measure.RunResult) int { return of(r.Config()) })
	if lo == hi {
		return fmt.Sprintf(one, strconv.Itoa(lo))
	}
	return fmt.Sprintf(many, fmt.Sprintf("%d to %d", lo, hi))
}

// trainData names what the runs train on: the corpus, or the tasks when every run trains on
// tasks (task.names), which replace the corpus in training.
func (rep *Report) trainData(corpus string) string {
	if !rep.tasksOnly() {
		return corpus
	}
	return "examples of its task (task.names in each run's config.yaml)"
}

// tasksOnly reports whether every run trains on tasks, never on the corpus.
func (rep *Report) tasksOnly() bool {
	for _, r := range rep.Runs {
		if r.Config().Task == nil {
			return false
		}
	}
	return true
}
