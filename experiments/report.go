package experiments

import (
	"bytes"
	"fmt"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"extrapolate/position"
)

// RunResult is one finished (or failed) run of a comparison.
type RunResult struct {
	Label  string `json:"label"`
	Seed   uint64 `json:"seed"`
	Config Config `json:"-"`
	// Resolved is Config resolved: the run's schemes.
	Resolved *Resolved `json:"-"`
	Result   *Result   `json:"result"`
	// Dir is the run's folder, where its loss by position is read from.
	Dir string `json:"-"`
}

// Stat is the mean and sample standard deviation over seeds at one length.
type Stat struct {
	Length   int     `json:"length"`
	Seeds    int     `json:"seeds"` // seeds with a score at this length
	PPLMean  float64 `json:"perplexity_mean"`
	PPLStd   float64 `json:"perplexity_std"`
	LossMean float64 `json:"loss_mean"`
	LossStd  float64 `json:"loss_std"`
	// NotApplicable gives the reason when no seed could be scored at this length.
	NotApplicable string `json:"not_applicable,omitempty"`
	// NonFinite lists the seeds whose loss or perplexity here was not finite, and
	// NonFiniteReason the first one's reason: they are left out of the mean and standard
	// deviation, which are then of the other seeds only, and no claim is decided on them.
	NonFinite       []uint64 `json:"nonfinite_seeds,omitempty"`
	NonFiniteReason string   `json:"nonfinite_reason,omitempty"`
}

// Series is one run of a comparison, aggregated over its seeds.
type Series struct {
	Label    string   `json:"label"`
	Position string   `json:"position"`
	Stats    []Stat   `json:"stats"`
	Failed   []uint64 `json:"failed_seeds,omitempty"`
	// Unscaled aggregates, for a scaled RoPE run, its weights evaluated without the scaling.
	Unscaled []Stat `json:"unscaled,omitempty"`
}

// At returns the statistic at length n.
func (s *Series) At(n int) (Stat, bool) {
	for _, st := range s.Stats {
		if st.Length == n {
			return st, true
		}
	}
	return Stat{}, false
}

// Report is a finished comparison.
type Report struct {
	Comparison *Comparison   `json:"-"`
	Command    string        `json:"command"`
	Generated  time.Time     `json:"generated"`
	TrainLen   int           `json:"train_len"`
	Lengths    []int         `json:"lengths"`
	Runs       []RunResult   `json:"runs"`
	Series     []*Series     `json:"series"`
	Claims     []ClaimResult `json:"claims"`
	// Points holds, for a comparison with a grid, each point's report; the others are empty.
	Points []*PointReport `json:"-"`

	deciding *Deciding // the claim being judged's deciding ratio so far (see consider)
}

// aggregate computes each label's mean and standard deviation over seeds, in the order of the
// comparison's runs.
func (rep *Report) aggregate() {
	if len(rep.Runs) == 0 {
		return
	}
	first := rep.Runs[0].Config
	rep.TrainLen, rep.Lengths = first.Train.SeqLen, first.Eval.Lengths
	byLabel := map[string]*Series{}
	var order []string
	for _, r := range rep.Runs {
		s := byLabel[r.Label]
		if s == nil {
			s = &Series{Label: r.Label, Position: positionOf(r.Config)}
			byLabel[r.Label] = s
			order = append(order, r.Label)
		}
		if r.Result.Status != "ok" {
			s.Failed = append(s.Failed, r.Seed)
		}
	}
	for _, label := range order {
		s := byLabel[label]
		var runs, unscaled []*Result
		var seeds, unscaledSeeds []uint64
		for _, r := range rep.Runs {
			if r.Label == label && r.Result.Status == "ok" {
				runs, seeds = append(runs, r.Result), append(seeds, r.Seed)
				if r.Result.Unscaled != nil {
					unscaled = append(unscaled, &Result{Lengths: r.Result.Unscaled})
					unscaledSeeds = append(unscaledSeeds, r.Seed)
				}
			}
		}
		s.Stats = stats(runs, seeds, rep.Lengths)
		if len(unscaled) > 0 {
			s.Unscaled = stats(unscaled, unscaledSeeds, rep.Lengths)
		}
		rep.Series = append(rep.Series, s)
	}
}

// stats aggregates runs, of the given seeds, at each length.
func stats(runs []*Result, seeds []uint64, lengths []int) []Stat {
	var out []Stat
	for _, n := range lengths {
		st := Stat{Length: n}
		var ppl, loss []float64
		for i, r := range runs {
			l, ok := r.At(n)
			switch {
			case ok && l.NonFinite:
				st.NonFinite = append(st.NonFinite, seeds[i])
				if st.NonFiniteReason == "" {
					st.NonFiniteReason = l.Reason
				}
			case ok && l.Applicable && l.Perplexity != nil:
				ppl, loss = append(ppl, *l.Perplexity), append(loss, *l.Loss)
			case ok && !l.Applicable && st.NotApplicable == "":
				st.NotApplicable = l.Reason
			}
		}
		st.Seeds = len(ppl)
		if st.Seeds > 0 {
			st.NotApplicable = ""
			st.PPLMean, st.PPLStd = meanStd(ppl)
			st.LossMean, st.LossStd = meanStd(loss)
		} else if st.NotApplicable == "" && st.NonFinite == nil {
			st.NotApplicable = "no run scored this length"
		}
		out = append(out, st)
	}
	return out
}

// write saves the comparison's JSON, each measure's section (its tables and figures) and
// REPORT.md.
func (rep *Report) write(dir string) error {
	sections, err := rep.sections()
	if err != nil {
		return err
	}
	if err := writeJSON(filepath.Join(dir, ComparisonJSON), rep); err != nil {
		return err
	}
	for _, s := range sections {
		if err := s.Write(dir); err != nil {
			return err
		}
	}
	return writeFile(filepath.Join(dir, ReportFile), rep.markdown(sections))
}

// sections gathers the registered measures' sections of the report, in the registry's order.
func (rep *Report) sections() ([]Section, error) {
	var out []Section
	for _, m := range Measures() {
		r, ok := m.(Reporter)
		if !ok {
			continue
		}
		s, err := r.Section(rep)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", m.Name(), err)
		}
		if s != nil {
			out = append(out, s)
		}
	}
	return out, nil
}

func (rep *Report) markdown(sections []Section) []byte {
	var b bytes.Buffer
	c := rep.Comparison
	first := rep.Runs[0].Config
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p("# Comparison: %s\n\n", c.Name)
	var seeds []string
	for _, s := range c.Seeds {
		seeds = append(seeds, strconv.FormatUint(s, 10))
	}
	res0 := rep.Runs[0].Result
	p("Produced by `%s` on %s with %s (%s/%s, %d CPUs).\n", rep.Command, rep.Generated.Format("2006-01-02"), res0.GoVersion, runtime.GOOS, runtime.GOARCH, runtime.NumCPU())
	p("Every run trains a %d-layer, %d-wide, %d-head model (about %d weights) for %d steps of %d sequences at length %d on %s, with seeds %s, and scores the same %d validation tokens at every length, in %s.\n\n",
		first.Model.Layers, first.Model.DModel, first.Model.Heads, res0.Params, first.Train.Steps, first.Train.BatchSize, rep.TrainLen, res0.Corpus, strings.Join(seeds, ", "), first.Eval.Tokens, first.Eval.Protocol())
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
	p("\n## Claims\n\nA claim marked checked is in this comparison's `claims:` list: the command exits 1 when it is not reproduced.\n\n| # | claim | verdict | checked |\n|---|---|---|---|\n")
	for i, cl := range rep.Claims {
		checked := "no"
		for _, id := range c.Claims {
			if id == cl.ID {
				checked = "yes"
			}
		}
		p("| %d | %s | **%s** | %s |\n", i+1, cl.Statement, cl.Verdict, checked)
	}
	for i, cl := range rep.Claims {
		p("\n### %d. %s\n\n%s\n\nRule: %s\n", i+1, cl.Statement, cl.Evidence, cl.Rule)
	}

	p("\n## Runs\n\n| run | seed | steps | train time (s) | final train loss | status |\n|---|---:|---:|---:|---:|---|\n")
	shared := rep.sharedTraining()
	for i, r := range rep.Runs {
		res := r.Result
		status := res.Status
		if res.Error != "" {
			status += ": " + res.Error
		}
		train := fmt.Sprintf("%.1f", res.TrainSeconds)
		if shared[i] != "" {
			// RoPE scalings apply when evaluating: this run took its weights from an earlier one.
			train = "(" + shared[i] + "'s)"
		}
		p("| %s | %d | %d | %s | %.3f | %s |\n", r.Label, r.Seed, res.Steps, train, res.FinalTrainLoss, status)
	}
	p("\nTraining and evaluation took %.0f s of computation in all; runs that differ from an earlier one only in a RoPE scaling applied at evaluation reuse its training, and show its name.\n", rep.computeSeconds())
	return b.Bytes()
}

// sharedTraining names, for each run, the earlier run whose training it reused ("" for a run
// that trained its own weights): RoPE scalings apply when evaluating, so runs that differ only
// in one train the same weights once.
func (rep *Report) sharedTraining() []string {
	out := make([]string, len(rep.Runs))
	trainedBy := map[string]string{} // training key → the run that trained it
	for i, r := range rep.Runs {
		key := trainingKey(r.Config)
		if by, ok := trainedBy[key]; ok && key != "" {
			out[i] = by
		} else {
			trainedBy[key] = fmt.Sprintf("%s-s%d", r.Label, r.Seed)
		}
	}
	return out
}

// computeSeconds is the time the runs took to train and evaluate, each shared training once.
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
		return b.String()
	}
	fmt.Fprintf(&b, "%-22s", "perplexity")
	for _, n := range rep.Lengths {
		fmt.Fprintf(&b, " %15s", fmt.Sprintf("%d (%gx)", n, float64(n)/float64(rep.TrainLen)))
	}
	b.WriteByte('\n')
	for _, s := range rep.Series {
		fmt.Fprintf(&b, "%-22s", s.Label)
		for _, st := range s.Stats {
			fmt.Fprintf(&b, " %15s", fmtStat(st))
		}
		b.WriteByte('\n')
	}
	for _, c := range rep.Claims {
		fmt.Fprintf(&b, "%-24s %s\n", c.ID, c.Verdict)
	}
	return b.String()
}

// Failed lists the claims the comparison checks that were not reproduced; for a grid, at any
// point, the point's name before the claim's id.
func (rep *Report) Failed() []ClaimResult {
	var out []ClaimResult
	for _, pt := range rep.Points {
		for _, f := range pt.Report.Failed() {
			f.ID = pt.Name + ": " + f.ID
			out = append(out, f)
		}
	}
	for _, id := range rep.Comparison.Claims {
		for _, c := range rep.Claims {
			if c.ID == id && c.Verdict != Reproduced {
				out = append(out, c)
			}
		}
	}
	return out
}

// positionOf names a run's position scheme with its scaling and attention temperature.
func positionOf(c Config) string {
	s := c.Position.Scheme
	if c.Position.Scaling != nil {
		s += " " + scalingName(c.Position)
	}
	if c.Attention.Scale != "" {
		s += " + " + c.Attention.Scale
	}
	return s
}

// seriesWhere returns the series whose runs satisfy match.
func (rep *Report) seriesWhere(match func(Config) bool) []*Series {
	var out []*Series
	for _, s := range rep.Series {
		for _, r := range rep.Runs {
			if r.Label == s.Label {
				if match(r.Config) {
					out = append(out, s)
				}
				break
			}
		}
	}
	return out
}

// perSeed returns each ok seed's perplexity at length n for a label.
func (rep *Report) perSeed(label string, n int) map[uint64]float64 {
	out := map[uint64]float64{}
	for _, r := range rep.Runs {
		if r.Label != label || r.Result.Status != "ok" {
			continue
		}
		if l, ok := r.Result.At(n); ok && l.Applicable && l.Perplexity != nil {
			out[r.Seed] = *l.Perplexity
		}
	}
	return out
}

// at returns a series' statistic at mult times the training length, if some seed scored it.
func (rep *Report) at(s *Series, mult int) (Stat, bool) {
	st, ok := s.At(mult * rep.TrainLen)
	return st, ok && st.Seeds > 0 && st.NonFinite == nil
}

// missing is the verdict of a claim that needs a series' perplexity at mult times the training
// length, where at found none, and why: undecided when a seed's loss there was not finite (the
// mean of the other seeds could hide a collapse), not applicable when nothing was scored.
func (rep *Report) missing(s *Series, mult int) (Verdict, string) {
	if st, ok := s.At(mult * rep.TrainLen); ok && st.NonFinite != nil {
		return Undecided, fmt.Sprintf("%s at %dx the training length: %s for seeds %v.", s.Label, mult, st.NonFiniteReason, st.NonFinite)
	}
	return NotApplicable, fmt.Sprintf("%s has no score at %dx the training length.", s.Label, mult)
}

// sources lists, once each, how the schemes of the comparison's runs set and train their own
// weights (position.Sourced), those of a mix's layers included.
func (rep *Report) sources() []string {
	var out []string
	seen := map[string]bool{}
	add := func(s position.Scheme) {
		if src, ok := s.(position.Sourced); ok && !seen[src.Sources()] {
			seen[src.Sources()] = true
			out = append(out, src.Sources())
		}
	}
	for _, r := range rep.Runs {
		s, _ := r.Resolved.Schemes()
		add(s)
		if pl, ok := s.(position.PerLayer); ok {
			for l := 0; l < r.Config.Model.Layers; l++ {
				add(pl.LayerScheme(l))
			}
		}
	}
	return out
}
