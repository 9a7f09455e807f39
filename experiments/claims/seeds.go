package claims

import (
	"fmt"
	"slices"
	"strings"
)

// seedsNeeded is the fewest seeds with results a verdict on c needs: one unless the claim
// says more.
func (c claim) seedsNeeded() int { return max(c.seeds, 1) }

// ruleWithSeeds is c's rule as a report states it: a claim that needs several seeds says so.
func (c claim) ruleWithSeeds() string {
	if n := c.seedsNeeded(); n > 1 {
		return c.rule + fmt.Sprintf(" Undecided on fewer than %d seeds with results: its rule compares means over seeds.", n)
	}
	return c.rule
}

// scoredSeeds lists, in order, the seeds for which some run of the comparison finished.
func (rep *judging) scoredSeeds() []uint64 {
	var seeds []uint64
	for _, r := range rep.Runs {
		if r.Result != nil && r.Result.OK() && !slices.Contains(seeds, r.Seed) {
			seeds = append(seeds, r.Seed)
		}
	}
	slices.Sort(seeds)
	return seeds
}

// enoughSeeds turns a verdict reached on fewer seeds than c needs into undecided, naming the
// seeds and keeping what the check found on them; any other verdict stands.
func (rep *judging) enoughSeeds(c claim, v Verdict, evidence string) (Verdict, string) {
	if v != Reproduced && v != NotReproduced {
		return v, evidence
	}
	seeds := rep.scoredSeeds()
	n := c.seedsNeeded()
	if len(seeds) >= n {
		return v, evidence
	}
	names := make([]string, len(seeds))
	for i, s := range seeds {
		names[i] = fmt.Sprint(s)
	}
	return Undecided, fmt.Sprintf("Results from %d of the %d seeds its rule needs (%s), where it would be %s: %s",
		len(seeds), n, strings.Join(names, ", "), v, evidence)
}
