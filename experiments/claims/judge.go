package claims

import (
	"fmt"
	"slices"

	"extrapolate/experiments/measure"
)

// Verdict is what a comparison found of a claim.
type Verdict string

const (
	Reproduced    Verdict = "reproduced"
	NotReproduced Verdict = "not reproduced"
	NotApplicable Verdict = "not applicable"
	// Undecided: a precondition of the claim is unmet, and the evidence names it with its
	// number: a number it needs is not finite (NaN or infinite) for some seed, or no seed has
	// it because every run failed; a scheme did not learn at 1x what the claim judges past 1x;
	// fewer seeds have results than its rule needs.
	Undecided Verdict = "undecided"
)

// Result is a claim with the numbers that decide it and the verdict.
type Result struct {
	ID        string  `json:"id"`
	Statement string  `json:"statement"`
	Verdict   Verdict `json:"verdict"`
	Evidence  string  `json:"evidence"`
	Rule      string  `json:"rule"`
	// Deciding is the ratio that decides a claim judged by ratios of perplexities.
	Deciding *Deciding `json:"deciding,omitempty"`
}

// Deciding is the one comparison of perplexities that decides a claim: of all the ratios its
// rule bounds, the one nearest to failing (or farthest past failing), with its limit and its
// value seed by seed, so that a claim can be followed across scales.
type Deciding struct {
	// What names the ratio, as "t5 / rope at 16x".
	What  string  `json:"what"`
	Ratio float64 `json:"ratio"`
	Limit float64 `json:"limit"`
	// AtLeast says that the rule asks Ratio ≥ Limit; otherwise it asks Ratio ≤ Limit.
	AtLeast bool `json:"at_least,omitempty"`
	// Seeds are the seeds both sides scored, in order, and SeedRatios the ratio for each.
	Seeds      []uint64  `json:"seeds,omitempty"`
	SeedRatios []float64 `json:"seed_ratios,omitempty"`
}

// margin is how far the ratio stands toward failing: above 1 fails.
func (d Deciding) margin() float64 {
	if d.AtLeast {
		return d.Limit / d.Ratio
	}
	return d.Ratio / d.Limit
}

// judging is a comparison's aggregate while one claim is judged on it, with the deciding
// ratio that claim has so far: the checks read the aggregate and keep their ratios here, so
// that the aggregate itself holds no verdicts.
type judging struct {
	*measure.Report
	deciding *Deciding // the claim being judged's deciding ratio so far (see consider)
}

// Judge checks every registered claim on a comparison's aggregate, in report order. A claim
// relevant only to some comparisons (passkeys) is judged there, or when checked lists it.
func Judge(rep *measure.Report, checked []string) []Result {
	var out []Result
	for _, c := range registered() {
		j := &judging{Report: rep}
		if c.relevant != nil && !c.relevant(j) && !slices.Contains(checked, c.id) {
			continue
		}
		v, ev := c.check(j)
		v, ev = j.enoughSeeds(c, v, ev)
		res := Result{ID: c.id, Statement: c.statement, Verdict: v, Evidence: ev, Rule: c.ruleWithSeeds()}
		if v == Reproduced || v == NotReproduced {
			// A claim left undecided or not applicable by a missing number has no deciding
			// ratio, whatever ratios were looked at before the number was found missing.
			res.Deciding = j.deciding
		}
		out = append(out, res)
	}
	return out
}

// consider keeps d, the ratio of a's perplexity at length n to b's at length m, as the claim's
// deciding ratio if it is nearer to failing than the one kept, with its value seed by seed.
func (rep *judging) consider(d Deciding, a string, n int, b string, m int) {
	if rep.deciding != nil && d.margin() <= rep.deciding.margin() {
		return
	}
	d.Seeds, d.SeedRatios = rep.seedRatios(a, n, b, m)
	rep.deciding = &d
}

// seedRatios divides a's perplexity at length n by b's at length m, seed by seed, for the
// seeds both scored.
func (rep *judging) seedRatios(a string, n int, b string, m int) (seeds []uint64, ratios []float64) {
	x, y := rep.PerSeed(a, n), rep.PerSeed(b, m)
	for seed := range x {
		if _, ok := y[seed]; ok {
			seeds = append(seeds, seed)
		}
	}
	slices.Sort(seeds)
	for _, seed := range seeds {
		ratios = append(ratios, x[seed]/y[seed])
	}
	return seeds, ratios
}

// missing is the verdict of a claim that needs a series' perplexity at mult times the training
// length, where At found none, and why: undecided when a seed's loss there was not finite (the
// mean of the other seeds could hide a collapse) or every seed's run failed, not applicable
// when the scheme cannot take the length.
func (rep *judging) missing(s *measure.Series, mult int) (Verdict, string) {
	st, ok := s.At(mult * rep.TrainLen)
	switch {
	case ok && st.NonFinite != nil:
		return Undecided, fmt.Sprintf("%s at %dx the training length: %s for seeds %v.", s.Label, mult, st.NonFiniteReason, st.NonFinite)
	case ok && st.NotApplicable == "" && st.Failed != nil:
		return Undecided, fmt.Sprintf("%s has no score at %dx the training length: its runs failed for seeds %v.", s.Label, mult, st.Failed)
	}
	return NotApplicable, fmt.Sprintf("%s has no score at %dx the training length.", s.Label, mult)
}
