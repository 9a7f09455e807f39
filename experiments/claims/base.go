package claims

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"extrapolate/experiments/measure"
	"extrapolate/experiments/measure/positions"
)

// Claims about RoPE's base (configs/rope_base.yaml, configs/rope_base_passkey.yaml): where RoPE
// breaks as its critical dimension predicts (Liu et al. 2024), a base small enough that every
// pair turns within training (Liu et al.), and the lower bound on the base for a context (Men et
// al. 2024). Their thresholds were fixed before the committed study, from its pilots at seed 7
// (head dimension 16, 64 tokens):
//
//   - bases 100, 500, 2000, 10⁴, 10⁵ and 10⁶ broke at 83, 108, 83, 108, 70 and 99 against
//     T_extra 112, 65, 109, 199, 112 and 199: 0.497 to 1.66 times it. The factor 2
//     (positions.PredictionFactor) was read off that range with 0.497 rounded to 0.50, so base
//     10⁶'s 0.497 falls just outside it: the pilot itself does not reproduce the claim, and the
//     study reports it without checking it;
//   - base 10, every pair turning within 64 tokens, scored 12.69 at 16x against base 10⁴'s 21.51
//     (0.59), and 6.89 against 6.80 at 1x;
//   - trained with passkeys, base 500, whose decay fails within 64 tokens, retrieved
//     100% at 1x, as base 10⁴ did, at perplexity 4.43 against 4.42: the claim did not reproduce
//     in its pilot, so the study reports it and does not check it.
const (
	// smallBaseFactor is "extrapolates better", as the rescuing scalings' 0.85 asks of a change
	// of frequencies.
	smallBaseFactor = rescueFactor
	// inDistributionTolerance: a base is compared past the training length only where it
	// learned about as well within it, its perplexity at 1x within alibi_flat's 5% of the
	// reference's; otherwise the comparison says nothing of extrapolation.
	inDistributionTolerance = 0.05
	// boundFails is "retrieval fails": at most half the keys at 1x, where the reference
	// retrieves at least passkeyRetrieves.
	boundFails = passkeyExtended
	// defaultBase is the base every other is compared with.
	defaultBase = 10000
)

// baseRoPE is plain RoPE scored as trained, at any base: the study's series.
var baseRoPE = plainRoPE

// based is a plain RoPE series with what its frequencies predict.
type based struct {
	s    *measure.Series
	base float64
	pred positions.Prediction
}

// bases lists the plain RoPE series (trained with passkeys or not, as passkeys says) with their
// bases and predictions, in report order.
func (rep *judging) bases(passkeys bool) []based {
	sel := baseRoPE
	if passkeys {
		sel = withPasskey(sel)
	} else {
		sel.Passkey = unset
	}
	var out []based
	for _, s := range rep.selectAll(sel) {
		for _, r := range rep.Runs {
			if r.Label != s.Label {
				continue
			}
			if p, ok := positions.PredictionOf(r, rep.TrainLen); ok {
				out = append(out, based{s: s, base: baseOf(p), pred: p})
			}
			break
		}
	}
	return out
}

// baseOf is the base of a plain RoPE ladder θ_i = β^(−2i/d): β = θ_1^(−d/2), d twice the pairs.
func baseOf(p positions.Prediction) float64 {
	if len(p.InvFreq) < 2 {
		return math.NaN()
	}
	return math.Pow(p.InvFreq[1], -float64(len(p.InvFreq)))
}

// severalBases: the base claims are judged where a comparison on the corpus has plain RoPE at
// two bases or more (a comparison of task runs has a plain RoPE series per task, at one base).
func severalBases(passkeys bool) func(*judging) bool {
	return func(rep *judging) bool {
		if !onCorpus(rep) {
			return false
		}
		var seen []float64
		for _, b := range rep.bases(passkeys) {
			if !slices.ContainsFunc(seen, func(x float64) bool { return math.Abs(x-b.base) <= 1e-6*b.base }) {
				seen = append(seen, b.base)
			}
		}
		return len(seen) >= 2
	}
}

// reference is the series at the default base, or why there is none.
func reference(bs []based) (based, bool) {
	for _, b := range bs {
		if math.Abs(b.base-defaultBase) < 1e-6*defaultBase {
			return b, true
		}
	}
	return based{}, false
}

var breakpointFollowsCritical = claim{
	id:        "breakpoint_follows_critical",
	statement: "RoPE breaks where its critical dimension predicts: past the training length, the loss rises near T_extra, the period of the first pair of dimensions that does not turn within training (Liu et al. 2024)",
	rule: fmt.Sprintf("for each plain RoPE series whose critical dimension predicts a limit, the breakpoint of its mean loss over seeds at its longest length "+
		"(`positions.Breakpoint`) is within a factor %g of T_extra; a series that does not break by its longest length passes when that length is at most %g × T_extra. "+
		"Needs three such series (bases).", positions.PredictionFactor, positions.PredictionFactor),
	check:    checkBreakpoint,
	relevant: severalBases(false),
}

var smallBaseExtrapolates = claim{
	id:        "small_base_extrapolates",
	statement: "A base small enough that every pair of dimensions turns within the training length extrapolates better than the default 10⁴ (Liu et al. 2024, whose base 500 does so at 4096 tokens and head dimension 128)",
	rule: fmt.Sprintf("for each plain RoPE series whose every pair turns within the training length (no T_extra), mean perplexity at 16x ≤ %g × that of plain RoPE at base 10⁴. "+
		"Undecided where the small base's mean perplexity at 1x is more than %g%% above base 10⁴'s: it did not learn as well in distribution.", smallBaseFactor, 100*inDistributionTolerance),
	check:    checkSmallBase,
	relevant: severalBases(false),
}

var baseBoundSuperficial = claim{
	id:        "base_bound_superficial",
	statement: "Below the lower bound on RoPE's base for the training length, perplexity holds while retrieval within that length fails (Men et al. 2024)",
	rule: fmt.Sprintf("for plain RoPE trained with passkeys, each series below Men et al.'s bound for the training length (B(m) = Σ cos(m·θ_i) < 0 for some m within it; `position.DecayHolds`) "+
		"has mean perplexity at 1x ≤ (1 + %g) × base 10⁴'s and passkey accuracy at 1x ≤ %g (mean over depths and seeds). Undecided where base 10⁴ retrieves less than %g at 1x.",
		inDistributionTolerance, boundFails, passkeyRetrieves),
	check:    checkBaseBound,
	relevant: severalBases(true),
}

func checkBreakpoint(rep *judging) (Verdict, string) {
	var finite []based
	for _, b := range rep.bases(false) {
		if b.pred.Finite() {
			finite = append(finite, b)
		}
	}
	if len(finite) < 3 {
		return NotApplicable, fmt.Sprintf("The comparison has %d plain RoPE series with a predicted limit; the claim needs three.", len(finite))
	}
	breaks, err := positions.Breaks(rep.Report)
	if err != nil {
		return Undecided, fmt.Sprintf("The loss by position could not be read: %v.", err)
	}
	return judgeBreaks(finite, breaks)
}

// judgeBreaks judges each series' breakpoint against its T_extra.
func judgeBreaks(finite []based, breaks []positions.SeriesBreak) (Verdict, string) {
	verdict := Reproduced
	var ev []string
	for _, b := range finite {
		i := slices.IndexFunc(breaks, func(br positions.SeriesBreak) bool { return br.Label == b.s.Label })
		if i < 0 {
			return Undecided, fmt.Sprintf("%s has no loss by position.", b.s.Label)
		}
		br, t := breaks[i], b.pred.Critical.TExtra
		if !br.Broke {
			ev = append(ev, fmt.Sprintf("%s does not break by %d against T_extra %.0f", b.s.Label, br.Length, t))
			if float64(br.Length) > positions.PredictionFactor*t {
				verdict = NotReproduced
			}
			continue
		}
		r := float64(br.At) / t
		ev = append(ev, fmt.Sprintf("%s breaks at %d against T_extra %.0f (%.3f of it)", b.s.Label, br.At, t, r))
		if r > positions.PredictionFactor || r < 1/positions.PredictionFactor {
			verdict = NotReproduced
		}
	}
	return verdict, strings.Join(ev, "; ") + "."
}

func checkSmallBase(rep *judging) (Verdict, string) {
	bs := rep.bases(false)
	ref, ok := reference(bs)
	if !ok {
		return NotApplicable, "The comparison has no plain RoPE at base 10⁴ to compare with."
	}
	verdict, found := Reproduced, false
	var ev []string
	for _, b := range bs {
		if b.pred.Finite() {
			continue
		}
		found = true
		if v, why := rep.learnedAlike(b.s, ref.s); v != "" {
			return v, why
		}
		v, e := rep.compareSeries(b.s, []*measure.Series{ref.s}, []int{16}, smallBaseFactor)
		if v != Reproduced && v != NotReproduced {
			return v, e
		}
		ev = append(ev, strings.TrimSuffix(e, "."))
		if v == NotReproduced {
			verdict = v
		}
	}
	if !found {
		return NotApplicable, "The comparison has no plain RoPE at a base whose every pair turns within the training length."
	}
	return verdict, strings.Join(ev, "; ") + "."
}

// learnedAlike is "" when s's mean perplexity at 1x is within inDistributionTolerance of
// ref's, and otherwise the verdict (undecided, or the missing number's) and why.
func (rep *judging) learnedAlike(s, ref *measure.Series) (Verdict, string) {
	a, ok := rep.At(s, 1)
	if !ok {
		return rep.missing(s, 1)
	}
	b, ok := rep.At(ref, 1)
	if !ok {
		return rep.missing(ref, 1)
	}
	if a.PPLMean > (1+inDistributionTolerance)*b.PPLMean {
		return Undecided, fmt.Sprintf("%s: perplexity %s at 1x against %s's %s, more than %g%% above it, so it did not learn as well in distribution and its extrapolation is not comparable.",
			s.Label, measure.FormatStat(a), ref.Label, measure.FormatStat(b), 100*inDistributionTolerance)
	}
	return "", ""
}

func checkBaseBound(rep *judging) (Verdict, string) {
	bs := rep.bases(true)
	ref, ok := reference(bs)
	if !ok {
		return NotApplicable, "The comparison has no plain RoPE at base 10⁴ trained with passkeys to compare with."
	}
	if !ref.pred.DecayHolds {
		return NotApplicable, fmt.Sprintf("%s is below Men et al.'s bound itself.", ref.s.Label)
	}
	refAcc, refSeeds, found := rep.passkeyAt(ref.s.Label, 1, 1)
	if !found {
		return NotApplicable, fmt.Sprintf("%s has no passkey result at 1x.", ref.s.Label)
	}
	if refAcc < passkeyRetrieves {
		return Undecided, fmt.Sprintf("%s retrieves %s at 1x (%s), below the %s a claim on retrieval needs.", ref.s.Label, measure.Percent(refAcc), strings.Join(refSeeds, ", "), measure.Percent(passkeyRetrieves))
	}
	verdict, below := Reproduced, false
	ev := []string{fmt.Sprintf("%s (above the bound) retrieves %s at 1x", ref.s.Label, measure.Percent(refAcc))}
	for _, b := range bs {
		if b.pred.DecayHolds {
			continue
		}
		below = true
		a, ok := rep.At(b.s, 1)
		if !ok {
			return rep.missing(b.s, 1)
		}
		r, ok := rep.At(ref.s, 1)
		if !ok {
			return rep.missing(ref.s, 1)
		}
		acc, seeds, found := rep.passkeyAt(b.s.Label, 1, 1)
		if !found {
			return NotApplicable, fmt.Sprintf("%s has no passkey result at 1x.", b.s.Label)
		}
		ratio := a.PPLMean / r.PPLMean
		ev = append(ev, fmt.Sprintf("%s (below the bound): perplexity at 1x %.2f of base 10⁴'s, passkey %s at 1x (%s)", b.s.Label, ratio, measure.Percent(acc), strings.Join(seeds, ", ")))
		if ratio > 1+inDistributionTolerance || acc > boundFails {
			verdict = NotReproduced
		}
	}
	if !below {
		return NotApplicable, "The comparison has no plain RoPE with passkeys at a base below Men et al.'s bound."
	}
	return verdict, strings.Join(ev, "; ") + "."
}
