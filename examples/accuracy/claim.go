package accuracy

import (
	"fmt"
	"slices"
	"strings"

	"extrapolate/experiments/claims"
	"extrapolate/experiments/measure"
)

// flatTolerance is alibi_flat's 5%, put in terms of accuracy: at 16x at least 95% of the 1x.
const flatTolerance = 0.05

// A claim registered from this package, as the measure is: judged in every report whose
// comparison has ALiBi runs with the accuracy measure, and checked where a claims: list names it.
func init() {
	claims.Register(claims.Claim{
		ID:        "accuracy_alibi_flat",
		Statement: "ALiBi's next-token accuracy holds past the training length, as its perplexity does (Press et al. 2022)",
		Rule:      fmt.Sprintf("for each ALiBi series with the accuracy measure, mean accuracy over seeds at 16x ≥ (1 − %g) × its mean at 1x.", flatTolerance),
		Check:     checkALiBiFlat,
		Relevant:  func(rep *measure.Report) bool { return len(alibiSeries(rep)) > 0 },
	})
}

// alibiSeries lists the labels of plain ALiBi runs (no distance map) measured for accuracy.
func alibiSeries(rep *measure.Report) []string {
	var out []string
	for _, s := range rep.Series {
		for _, r := range rep.Runs {
			if r.Label != s.Label {
				continue
			}
			p := r.Config().Position
			if p.Scheme == "alibi" && p.DistanceMap == nil && slices.Contains(r.Config().Eval.Measures, Measure{}.Name()) {
				out = append(out, s.Label)
			}
			break
		}
	}
	return out
}

// meanAt is a label's accuracy at length n, averaged over its ok runs; ok is false when a run
// has none there (not applicable, or not finite).
func meanAt(rep *measure.Report, label string, n int) (mean float64, ok bool) {
	var xs []float64
	for _, r := range rep.Runs {
		if r.Label != label || !r.Result.OK() {
			continue
		}
		ls, err := Of(r.Result)
		if err != nil {
			return 0, false
		}
		found := false
		for _, l := range ls {
			if l.Length == n && l.Applicable {
				xs, found = append(xs, l.Accuracy), true
			}
		}
		if !found {
			return 0, false
		}
	}
	if len(xs) == 0 {
		return 0, false
	}
	mean, _ = measure.MeanStd(xs)
	return mean, true
}

func checkALiBiFlat(rep *measure.Report) (claims.Verdict, string) {
	labels := alibiSeries(rep)
	if len(labels) == 0 {
		return claims.NotApplicable, "The comparison has no ALiBi run with the accuracy measure."
	}
	verdict := claims.Reproduced
	var ev []string
	for _, label := range labels {
		one, ok1 := meanAt(rep, label, rep.TrainLen)
		far, ok16 := meanAt(rep, label, 16*rep.TrainLen)
		if !ok1 || !ok16 {
			return claims.Undecided, fmt.Sprintf("%s has no accuracy at 1x and 16x for every seed.", label)
		}
		ev = append(ev, fmt.Sprintf("%s: %.1f%% at 1x, %.1f%% at 16x (%.3f of it)", label, 100*one, 100*far, far/one))
		if far < (1-flatTolerance)*one {
			verdict = claims.NotReproduced
		}
	}
	return verdict, strings.Join(ev, "; ") + "."
}
