package measure

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"extrapolate/experiments/config"
	"extrapolate/position"
)

// RunResult is one finished (or failed) run of a comparison.
type RunResult struct {
	Label string `json:"label"`
	Seed  uint64 `json:"seed"`
	// Resolved is the run's config, resolved: its schemes.
	Resolved *config.Resolved `json:"-"`
	Result   *Result          `json:"result"`
	// Dir is the run's folder, where its loss by position is read from.
	Dir string `json:"-"`
}

// Config is the run's config (Resolved.Config); the zero config for a RunResult without one.
func (r RunResult) Config() config.Config {
	if r.Resolved == nil {
		return config.Config{}
	}
	return r.Resolved.Config()
}

// Stat is the mean and sample standard deviation over seeds at one length.
type Stat struct {
	Length   int     `json:"length"`
	Seeds    int     `json:"seeds"` // seeds with a score at this length
	PPLMean  float64 `json:"perplexity_mean"`
	PPLStd   float64 `json:"perplexity_std"`
	LossMean float64 `json:"loss_mean"`
	LossStd  float64 `json:"loss_std"`
	// NotApplicable gives the reason, the scheme's, when no seed could be scored at this
	// length.
	NotApplicable string `json:"not_applicable,omitempty"`
	// Failed lists the seeds whose runs failed (training diverged): none of their numbers is
	// in the mean, and when no seed is left the statistic has none.
	Failed []uint64 `json:"failed_seeds,omitempty"`
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

// Report is a comparison's runs and their aggregate over seeds, as a measure's section reads
// them; the comparison's full report, with the claims, is built on it above.
type Report struct {
	// Name and Seeds are the comparison's.
	Name      string      `json:"-"`
	Seeds     []uint64    `json:"-"`
	Command   string      `json:"command"`
	Generated time.Time   `json:"generated"`
	TrainLen  int         `json:"train_len"`
	Lengths   []int       `json:"lengths"`
	Runs      []RunResult `json:"runs"`
	Series    []*Series   `json:"series"`
	// PlainRoPE is the label of the series the claims compare with, plain RoPE, which every
	// panel of a figure draws as its reference; "" for none. The comparison sets it from the
	// claims (claims.PlainRoPE), which know what plain RoPE is, once it has aggregated.
	PlainRoPE string `json:"-"`
}

// Aggregate computes each label's mean and standard deviation over seeds, in the order of the
// comparison's runs.
func (rep *Report) Aggregate() {
	if len(rep.Runs) == 0 {
		return
	}
	first := rep.Runs[0].Config()
	rep.TrainLen, rep.Lengths = first.Train.SeqLen, first.Eval.Lengths
	byLabel := map[string]*Series{}
	var order []string
	for _, r := range rep.Runs {
		s := byLabel[r.Label]
		if s == nil {
			s = &Series{Label: r.Label, Position: PositionOf(r.Config())}
			byLabel[r.Label] = s
			order = append(order, r.Label)
		}
		if !r.Result.OK() {
			s.Failed = append(s.Failed, r.Seed)
		}
	}
	for _, label := range order {
		s := byLabel[label]
		var runs, unscaled []*Result
		var seeds, unscaledSeeds []uint64
		for _, r := range rep.Runs {
			if r.Label == label && r.Result.OK() {
				runs, seeds = append(runs, r.Result), append(seeds, r.Seed)
				if r.Result.Unscaled != nil {
					unscaled = append(unscaled, &Result{Lengths: r.Result.Unscaled})
					unscaledSeeds = append(unscaledSeeds, r.Seed)
				}
			}
		}
		s.Stats = stats(runs, seeds, s.Failed, rep.Lengths)
		if len(unscaled) > 0 {
			s.Unscaled = stats(unscaled, unscaledSeeds, s.Failed, rep.Lengths)
		}
		rep.Series = append(rep.Series, s)
	}
}

// stats aggregates runs, of the given seeds, at each length; failed are the seeds whose runs
// failed, which have no numbers.
func stats(runs []*Result, seeds, failed []uint64, lengths []int) []Stat {
	var out []Stat
	for _, n := range lengths {
		st := Stat{Length: n, Failed: failed}
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
		// Not applicable is the scheme's word, which a run records; a length no seed scored
		// because every run failed is not.
		st.Seeds = len(ppl)
		if st.Seeds > 0 {
			st.NotApplicable = ""
			st.PPLMean, st.PPLStd = MeanStd(ppl)
			st.LossMean, st.LossStd = MeanStd(loss)
		}
		out = append(out, st)
	}
	return out
}

// MeanStd returns the mean and the sample standard deviation (0 for a single value): every
// measure averages over seeds with it, so that its means are the comparison's own.
func MeanStd(x []float64) (mean, std float64) {
	if len(x) == 0 {
		return math.NaN(), math.NaN()
	}
	for _, v := range x {
		mean += v
	}
	mean /= float64(len(x))
	if len(x) < 2 {
		return mean, 0
	}
	for _, v := range x {
		std += (v - mean) * (v - mean)
	}
	return mean, math.Sqrt(std / float64(len(x)-1))
}

// PositionOf names a run's position scheme with its window, scaling, distance map, attention
// temperature, DroPE and position ids in training.
func PositionOf(c config.Config) string {
	s := c.Position.Scheme
	if c.Position.Window > 0 {
		s += fmt.Sprintf(" window=%d", c.Position.Window)
	}
	if c.Position.Scaling != nil {
		s += " " + ScalingName(c.Position)
	}
	if m := c.Position.DistanceMap; m != nil {
		s += " + " + m.String()
	}
	if c.Attention.Scale != "" {
		s += " + " + c.Attention.Scale
	}
	if d := c.Train.DroPE; d != nil {
		s += fmt.Sprintf(" + drope(fraction=%g)", d.Fraction)
	}
	if p := c.Train.Positions; p != nil {
		s += " + " + p.String()
	}
	return s
}

// SeriesWhere returns the series whose runs satisfy match.
func (rep *Report) SeriesWhere(match func(config.Config) bool) []*Series {
	var out []*Series
	for _, s := range rep.Series {
		for _, r := range rep.Runs {
			if r.Label == s.Label {
				if match(r.Config()) {
					out = append(out, s)
				}
				break
			}
		}
	}
	return out
}

// AllOnTasks reports whether the comparison has runs and every one trained on tasks
// (config.Task), never on the corpus: then its perplexity is no result, as the perplexity's
// section and the claims on perplexity say.
func (rep *Report) AllOnTasks() bool {
	for _, r := range rep.Runs {
		if r.Config().Task == nil {
			return false
		}
	}
	return len(rep.Runs) > 0
}

// PerSeed returns each ok seed's perplexity at length n for a label.
func (rep *Report) PerSeed(label string, n int) map[uint64]float64 {
	out := map[uint64]float64{}
	for _, r := range rep.Runs {
		if r.Label != label || !r.Result.OK() {
			continue
		}
		if l, ok := r.Result.At(n); ok && l.Applicable && l.Perplexity != nil {
			out[r.Seed] = *l.Perplexity
		}
	}
	return out
}

// At returns a series' statistic at mult times the training length, if some seed scored it.
func (rep *Report) At(s *Series, mult int) (Stat, bool) {
	st, ok := s.At(mult * rep.TrainLen)
	return st, ok && st.Seeds > 0 && st.NonFinite == nil
}

// FormatStat is a statistic as a table cell: mean ± std, with the seeds left out, or why there
// is none.
func FormatStat(st Stat) string {
	if st.Seeds == 0 {
		return Missing(st)
	}
	return fmt.Sprintf("%.2f ± %.2f%s", st.PPLMean, st.PPLStd, LeftOut(st))
}

// Missing says why a statistic no seed scored has no number: the scheme cannot take the length
// (n/a), the loss was not finite, or the runs failed.
func Missing(st Stat) string {
	switch {
	case st.NonFinite != nil:
		return "non-finite"
	case st.NotApplicable != "":
		return "n/a"
	case st.Failed != nil:
		return "failed"
	}
	return "–"
}

// LeftOut is what a statistic's mean leaves out, as " (1 non-finite, 1 failed)", or "".
func LeftOut(st Stat) string {
	var parts []string
	if st.NonFinite != nil {
		parts = append(parts, fmt.Sprintf("%d non-finite", len(st.NonFinite)))
	}
	if st.Failed != nil {
		parts = append(parts, fmt.Sprintf("%d failed", len(st.Failed)))
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

// Ratio writes length n as a multiple of the training length: 2x, 16x, 0.5x, and, for a
// length that is no simple multiple (a task run's training window), three digits, 0.842x.
func Ratio(n, trainLen int) string {
	r := float64(n) / float64(trainLen)
	if r >= 1000 {
		return strconv.FormatFloat(r, 'f', 0, 64) + "x"
	}
	return strconv.FormatFloat(r, 'g', 3, 64) + "x"
}

// Percent writes a share as a percentage with the digits it needs.
func Percent(x float64) string {
	return strconv.FormatFloat(100*x, 'g', 3, 64) + "%"
}

func ScalingName(p position.Config) string {
	if p.Scaling == nil {
		return ""
	}
	return fmt.Sprintf("%s(factor=%s)", p.Scaling.Type, p.Scaling.Factor)
}

// LengthSpread writes one length a seed (0 for a seed that has none) as multiples of the
// training length: their range over the seeds that have one ("–" for none), and each seed's,
// in order ("–" for 0). The effective lengths of the reports are written so.
func LengthSpread(lengths []int, trainLen int) (span, each string) {
	cells := make([]string, len(lengths))
	lo, hi := 0, 0
	for i, n := range lengths {
		if n == 0 {
			cells[i] = "–"
			continue
		}
		cells[i] = Ratio(n, trainLen)
		if lo == 0 || n < lo {
			lo = n
		}
		hi = max(hi, n)
	}
	switch {
	case lo == 0:
		span = "–"
	case lo == hi:
		span = Ratio(lo, trainLen)
	default:
		span = Ratio(lo, trainLen) + " to " + Ratio(hi, trainLen)
	}
	return span, strings.Join(cells, ", ")
}
