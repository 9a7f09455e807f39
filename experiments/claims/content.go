package claims

import (
	"errors"
	"fmt"
	"strings"

	"extrapolate/experiments/measure"
)

// Claims about positions read from the content (FoX, stick-breaking). Each threshold is the
// claim's wording in the terms of the claims before it, fixed before the committed comparison
// (configs/compare.yaml) from runs made before it: "below RoPE's" past the training length is
// p-RoPE's "better past it" (pRoPEFactor, 0.95); "within a few percent" is alibi_flat's 5%
// (mapFlatTolerance). The runs before: configs/fox.yaml (seed 1, perplexity 6.52 at 1x, 6.35 at
// 4x and 6.31 at 16x, where rope.yaml's seed 1 has 13.34 and 24.91), and stickbreaking.yaml for
// 300 steps (seed 1, 10.78 at 1x, 10.67 at 8x).

var (
	plainFoX           = plain("FoX", "fox")
	plainStickBreaking = plain("stick-breaking attention", "stickbreaking", "attend_current")
)

var foxBeatsRoPE = claim{
	id:        "fox_beats_rope",
	statement: "The Forgetting Transformer's perplexity past the training length is below RoPE's (Lin et al. 2025)",
	rule:      fmt.Sprintf("FoX's mean perplexity at 4x and at 16x ≤ %g × plain RoPE's at the same length.", pRoPEFactor),
	check:     checkFoX,
	relevant:  with(onCorpus, plainFoX),
}

var stickBreakingFlat = claim{
	id:        "stickbreaking_flat",
	statement: "Stick-breaking attention stays within a few percent of its 1x perplexity at 8x, with no position encoding (Tan et al. 2025)",
	rule:      fmt.Sprintf("for each stick-breaking run, mean perplexity at 8x ≤ (1 + %g) × the same run's mean at 1x.", mapFlatTolerance),
	check:     func(rep *judging) (Verdict, string) { return rep.flat(plainStickBreaking, 8, mapFlatTolerance) },
	relevant:  with(onCorpus, plainStickBreaking),
}

func checkFoX(rep *judging) (Verdict, string) {
	return rep.againstOne(plainFoX, plainRoPE, []int{4, 16}, pRoPEFactor)
}

// againstOne judges each series sel picks against the one series ref picks, by compareSeries
// at mults with limit; it does not apply without a series of sel or a single one of ref.
func (rep *judging) againstOne(sel, ref selector, mults []int, limit float64) (Verdict, string) {
	ss := rep.selectAll(sel)
	if len(ss) == 0 {
		return NotApplicable, fmt.Sprintf("The comparison has no run of %s.", sel.Name)
	}
	r, err := rep.the(ref)
	if errors.Is(err, errNoSeries) {
		return NotApplicable, fmt.Sprintf("The comparison has no run of %s to compare %s with.", ref.Name, sel.Name)
	}
	if err != nil {
		return NotApplicable, notOne(err)
	}
	verdict := Reproduced
	var ev []string
	for _, s := range ss {
		v, e := rep.compareSeries(s, []*measure.Series{r}, mults, limit)
		if v != Reproduced && v != NotReproduced {
			return v, e
		}
		ev = append(ev, strings.TrimSuffix(e, "."))
		if v == NotReproduced {
			verdict = v
		}
	}
	return verdict, strings.Join(ev, "; ") + "."
}
