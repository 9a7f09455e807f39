package experiments

import (
	"extrapolate/experiments/measure"
	"fmt"
	"slices"
	"sync"

	"extrapolate/experiments/config"
)

// Verdict is what a comparison found of a claim.
type Verdict string

const (
	Reproduced    Verdict = "reproduced"
	NotReproduced Verdict = "not reproduced"
	NotApplicable Verdict = "not applicable"
	// Undecided: a number the claim needs is not finite (NaN or infinite) for some seed.
	Undecided Verdict = "undecided"
)

// ClaimResult is a claim with the numbers that decide it and the verdict.
type ClaimResult struct {
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

// consider keeps d, the ratio of a's perplexity at length n to b's at length m, as the claim's
// deciding ratio if it is nearer to failing than the one kept, with its value seed by seed.
func (rep *Report) consider(d Deciding, a string, n int, b string, m int) {
	if rep.deciding != nil && d.margin() <= rep.deciding.margin() {
		return
	}
	d.Seeds, d.SeedRatios = rep.seedRatios(a, n, b, m)
	rep.deciding = &d
}

// seedRatios divides a's perplexity at length n by b's at length m, seed by seed, for the
// seeds both scored.
func (rep *Report) seedRatios(a string, n int, b string, m int) (seeds []uint64, ratios []float64) {
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

// A claim from the position-encoding literature, with a check on a comparison's results. A
// claim names the series it needs with selectors (claims_select.go), by what their runs are.
type claim struct {
	// id names the claim in a comparison's claims: list, in reports and in file names.
	id, statement, rule string
	check               func(rep *Report) (Verdict, string)
	// relevant, when set, says whether a report should give the claim a verdict at all
	// unless the comparison lists it: passkey claims are noise in a comparison without passkeys.
	relevant func(rep *Report) bool
}

// claims is the registry of claims, in the order they registered: the order of a report's
// claims and of a grid's table.
var claims struct {
	mu   sync.RWMutex
	list []claim
}

// The built-in claims register here, in the order a report shows them. The figures draw the
// claims' plain RoPE as their reference, through measure's hook.
func init() {
	measure.PlainRoPE = plainRoPE.the
	for _, c := range []claim{
		learnedNotApplicable, sinusoidalDegrades, alibiFlat, scalingRescuesRoPE,
		t5Extrapolates, kerpleMatchesALiBi, fireMatchesALiBiKERPLE, lognHelps, lognTrainHelps,
		mixExtrapolates, ropeRelative,
		passkeyRoPE, passkeyScalingExtends, passkeyALiBiLocal,
	} {
		registerClaim(c)
	}
}

// registerClaim makes a claim available by its id, to comparisons' claims: lists and every
// report. It panics if the id is taken or not a name, as measure.Register does, since that is a
// programming error: two claims of one id would make a checked list ambiguous.
func registerClaim(c claim) {
	claims.mu.Lock()
	defer claims.mu.Unlock()
	if err := checkNewClaim(c); err != nil {
		panic("experiments: registerClaim: " + err.Error())
	}
	claims.list = append(claims.list, c)
}

// checkNewClaim refuses a claim without a check, or whose id is not a name (it names a grid's
// figures, scale_<id>.png) or is registered already.
func checkNewClaim(c claim) error {
	if !config.IsName(c.id) {
		return fmt.Errorf("claim id %q: want at most %d letters, digits, '.', '_' or '-', the first a letter or digit (it names files)", c.id, config.MaxName)
	}
	if c.check == nil {
		return fmt.Errorf("claim %s: no check", c.id)
	}
	for _, o := range claims.list {
		if o.id == c.id {
			return fmt.Errorf("claim %s registered twice", c.id)
		}
	}
	return nil
}

// registeredClaims lists the registered claims, in the order they registered.
func registeredClaims() []claim {
	claims.mu.RLock()
	defer claims.mu.RUnlock()
	return slices.Clone(claims.list)
}

func claimByID(id string) (claim, bool) {
	for _, c := range registeredClaims() {
		if c.id == id {
			return c, true
		}
	}
	return claim{}, false
}

func claimIDs() []string {
	var ids []string
	for _, c := range registeredClaims() {
		ids = append(ids, c.id)
	}
	return ids
}

// judge checks every claim.
func (rep *Report) judge() {
	rep.Claims = nil
	for _, c := range registeredClaims() {
		if c.relevant != nil && !c.relevant(rep) && !slices.Contains(rep.Comparison.Claims, c.id) {
			continue
		}
		rep.deciding = nil
		v, ev := c.check(rep)
		res := ClaimResult{ID: c.id, Statement: c.statement, Verdict: v, Evidence: ev, Rule: c.rule}
		if v == Reproduced || v == NotReproduced {
			// A claim left undecided or not applicable by a missing number has no deciding
			// ratio, whatever ratios were looked at before the number was found missing.
			res.Deciding = rep.deciding
		}
		rep.Claims = append(rep.Claims, res)
	}
}
