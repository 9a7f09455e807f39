// Package claims judges the claims of the position-encoding literature on a comparison's
// aggregate (measure.Report): a registry of claims in report order, each with its rule and its
// check, the selectors that pick the series a claim is about by what their runs are, and the
// verdicts with the ratio that decided them.
//
// It sits above experiments/measure and knows nothing of comparisons, runs or reports: a
// comparison hands it the aggregate and the ids its claims: list checks (Judge), and checks
// that list against the registry (Known).
package claims

import (
	"fmt"
	"slices"
	"sync"

	"extrapolate/experiments/config"
	"extrapolate/experiments/measure"
)

// A claim from the position-encoding literature, with a check on a comparison's results. A
// claim names the series it needs with selectors (select.go), by what their runs are.
type claim struct {
	// id names the claim in a comparison's claims: list, in reports and in file names.
	id, statement, rule string
	check               func(rep *judging) (Verdict, string)
	// relevant, when set, says whether a report should give the claim a verdict at all
	// unless the comparison lists it: passkey claims are noise in a comparison without passkeys.
	relevant func(rep *judging) bool
	// seeds is the fewest seeds with results a verdict needs (seedsNeeded); 0 means one.
	seeds int
}

// with is a claim's relevant for a claim about one kind of run: judged where scope holds and
// the comparison has a run sel selects, since elsewhere its verdict could only be not applicable.
func with(scope func(*judging) bool, sel selector) func(*judging) bool {
	return func(rep *judging) bool { return scope(rep) && len(rep.selectAll(sel)) > 0 }
}

// registry holds the claims in the order they registered: the order of a report's claims and
// of a grid's table.
var registry struct {
	mu   sync.RWMutex
	list []claim
}

// The built-in claims register here, in the order a report shows them.
func init() {
	for _, c := range []claim{
		learnedNotApplicable, sinusoidalDegrades, alibiFlat, scalingRescuesRoPE,
		t5Extrapolates, kerpleMatchesALiBi, fireMatchesALiBiKERPLE, lognHelps, lognTrainHelps,
		mixExtrapolates, swanLayoutFlat, ropeRelative, foxBeatsRoPE, stickBreakingFlat,
		gateRemovesSink, gatedExtrapolates, softpickNoSink,
		reropeFlat, lmInfiniteFlat, dualChunkFlat, streamingNeedsSinks, pRoPEBetter, poseMatchesFinetune,
		breakpointFollowsCritical, smallBaseExtrapolates,
		passkeyRoPE, passkeyScalingExtends, passkeyALiBiLocal, passkeySelfExtend, passkeyDualChunk, baseBoundSuperficial,
		tasksSolvable, tasksRoPECopyFails, tasksFlipFlopDegrades, tasksNeedleRoPE, tasksCountingFails, tasksNoPERanking, tasksCoPECounts, tasksHardALiBiCopies,
		tasksSelfExtendNeedle, tasksReRoPENeedle, tasksRandomizedHelps, tasksDroPENeedles,
	} {
		register(c)
	}
}

// Claim is a claim registered from another package (Register): a measure's own claim, or one on
// a scheme of your own. Its check reads the comparison's aggregate, every run with its config
// and results, as a measure's section does.
type Claim struct {
	// ID names the claim in a comparison's claims: list, in reports and in file names.
	ID string
	// Statement is the claim as its paper makes it, with the paper; Rule how the check judges
	// it, with its threshold.
	Statement, Rule string
	// Check judges the claim: a verdict and the evidence, a sentence with the numbers. It
	// returns Undecided, naming the number, where the runs lack what the claim needs (a task
	// not learned, a number not finite).
	Check func(rep *measure.Report) (Verdict, string)
	// Relevant, when set, says whether a report judges the claim unless the comparison lists
	// it; nil judges it in every report.
	Relevant func(rep *measure.Report) bool
	// Seeds, when above one, is the fewest seeds with results a verdict needs: a rule that
	// compares means over seeds cannot be decided on one. With fewer, the verdict is
	// undecided, naming them.
	Seeds int
}

// Register makes a claim of another package available by its id, after the built-in ones in
// the reports. Call it from the package's init function, and import the package in
// plugins/plugins.go. It panics if the id is taken or not a name, or the claim has no check.
func Register(c Claim) {
	in := claim{id: c.ID, statement: c.Statement, rule: c.Rule, seeds: c.Seeds}
	if c.Check != nil {
		in.check = func(rep *judging) (Verdict, string) { return c.Check(rep.Report) }
	}
	if c.Relevant != nil {
		in.relevant = func(rep *judging) bool { return c.Relevant(rep.Report) }
	}
	register(in)
}

// register makes a claim available by its id, to comparisons' claims: lists and every report.
// It panics if the id is taken or not a name, as measure.Register does, since that is a
// programming error: two claims of one id would make a checked list ambiguous.
func register(c claim) {
	registry.mu.Lock()
	defer registry.mu.Unlock()
	if err := checkNew(c); err != nil {
		panic("claims: register: " + err.Error())
	}
	registry.list = append(registry.list, c)
}

// checkNew refuses a claim without a check, or whose id is not a name (it names a grid's
// figures, scale_<id>.png) or is registered already.
func checkNew(c claim) error {
	if !config.IsName(c.id) {
		return fmt.Errorf("claim id %q: want at most %d letters, digits, '.', '_' or '-', the first a letter or digit (it names files)", c.id, config.MaxName)
	}
	if c.check == nil {
		return fmt.Errorf("claim %s: no check", c.id)
	}
	if c.seeds < 0 {
		return fmt.Errorf("claim %s: seeds %d, want 0 or more", c.id, c.seeds)
	}
	for _, o := range registry.list {
		if o.id == c.id {
			return fmt.Errorf("claim %s registered twice", c.id)
		}
	}
	return nil
}

// registered lists the registered claims, in the order they registered.
func registered() []claim {
	registry.mu.RLock()
	defer registry.mu.RUnlock()
	return slices.Clone(registry.list)
}

// Known reports whether a claim of this id is registered, for a comparison's claims: list.
func Known(id string) bool {
	return slices.ContainsFunc(registered(), func(c claim) bool { return c.id == id })
}

// IDs lists the registered claims' ids in report order: a grid's table follows it.
func IDs() []string {
	var ids []string
	for _, c := range registered() {
		ids = append(ids, c.id)
	}
	return ids
}
