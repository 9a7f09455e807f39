package claims

import (
	"fmt"
	"strings"

	"extrapolate/experiments/measure"
)

// Hard-ALiBi's claim (Jelassi et al. 2024, "Repeat After Me"): windowing half the heads to
// their latest keys and leaving the others without positions lets a transformer copy strings
// longer than it trained on. "Copies" is taken as at least half the strings copied exactly at
// 2x the largest training size (hardALiBiCopied): a bar below taskSolved, since the claim is
// that copying carries past the training sizes at all, and at 2x, the ratio the task claims
// judge generalisation at (rankingRatio). Fixed before the committed runs
// (results/copy_hard_alibi) from pilots of seed 7, which no committed comparison trains (copy
// alone, 6000 steps, batch 32, exact match at 0.5x / 1x / 1.5x / 2x): 2 layers 99 / 59 / 0 /
// 0%, so the comparison trains 4, where 4 heads gave 100 / 100 / 1 / 0% and 8 heads 100 /
// 100 / 0 / 0%.

// hardALiBi is the scheme as its paper has it: any number of windowed heads.
var hardALiBi = plain("Hard-ALiBi", "hard_alibi", "masked_heads")

// hardALiBiCopied: at 2x, Hard-ALiBi copies at least this share of the strings exactly.
const hardALiBiCopied = 0.5

var tasksHardALiBiCopies = claim{
	id:        "tasks_hard_alibi_copies",
	statement: "Hard-ALiBi copies strings longer than it trained on (Jelassi et al. 2024)",
	rule: fmt.Sprintf("Hard-ALiBi's exact match on copy (mean over seeds) ≥ %g at %dx the largest training size. Undecided where it does not copy at 1x (≥ %g).",
		hardALiBiCopied, rankingRatio, taskSolved),
	check:    checkHardALiBiCopies,
	relevant: with(hasTasks, hardALiBi),
}

func checkHardALiBiCopies(rep *judging) (Verdict, string) {
	sts, v, why := rep.on(hardALiBi, "copy")
	if sts == nil {
		return v, why
	}
	if v, why := learned(hardALiBi.Name, "copy", sts); v != "" {
		return v, why
	}
	two, ok := at(sts, rankingRatio)
	if !ok || two.Seeds == 0 {
		return NotApplicable, fmt.Sprintf("Hard-ALiBi was not scored on copy at %dx.", rankingRatio)
	}
	var ev []string
	for _, st := range sts {
		if st.Seeds > 0 {
			ev = append(ev, fmt.Sprintf("%gx %s", st.Ratio, measure.Percent(st.Mean)))
		}
	}
	verdict := Reproduced
	if two.Mean < hardALiBiCopied {
		verdict = NotReproduced
	}
	why = fmt.Sprintf("Hard-ALiBi on copy: %s.", strings.Join(ev, ", "))
	// RoPE beside it, where the comparison has it, for scale.
	if rs, v, _ := rep.on(plainRoPE, "copy"); rs != nil && v == "" {
		if r, ok := at(rs, rankingRatio); ok && r.Seeds > 0 {
			why += fmt.Sprintf(" Plain RoPE at %dx: %s.", rankingRatio, measure.Percent(r.Mean))
		}
	}
	return verdict, why
}
