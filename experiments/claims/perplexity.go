package claims

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strings"

	"extrapolate/experiments/measure"
	"extrapolate/position"
)

// The claims judged on perplexity, and rope_relative, each a value registered in registry.go.

// The series these claims are about, each by what it is (plainRoPE is select.go's).
var (
	anyLearned      = selector{Name: "learned", Scheme: "learned"}
	anyRoPE         = selector{Name: "RoPE", Scheme: "rope", DroPE: unset} // a DroPE run is evaluated without positions
	plainSinusoidal = plain("plain sinusoidal", "sinusoidal")
	plainALiBi      = plain("plain ALiBi", "alibi")
	plainT5         = plain("plain T5", "t5")
	plainKERPLE     = plain("plain KERPLE", "kerple")
	plainFIRE       = plain("plain FIRE", "fire")
	plainNoPE       = plain("plain NoPE", "nope")
	// rescuedRoPE is RoPE with a scaling meant to work without fine-tuning, fine-tuned or not.
	rescuedRoPE = selector{Name: "RoPE with a scaling meant to work without fine-tuning", Scheme: "rope", Scaling: rescues, Map: unset, Window: unset, Positions: unset}
	ropeNoPEMix = selector{Name: "RoPE/NoPE mix", Scheme: "mix", Scaling: unset, Temperature: unset, Finetune: unset, DroPE: unset, Map: unset, Window: unset, Positions: unset, Layers: []string{"rope", "nope"}, LayerWindow: unset}
	// swanLayout is SWAN-GPT's layout: RoPE layers with a sliding window and NoPE layers with
	// none, as a mix, with nothing else varied.
	swanLayout = selector{Name: "SWAN-GPT's layout", Scheme: "mix", Scaling: unset, Temperature: unset, Normaliser: unset, Gate: unset, Sinks: unset,
		Finetune: unset, DroPE: unset, Map: unset, Window: unset, Positions: unset, Layers: []string{"rope", "nope"}, LayerWindow: set}
)

// rescues accepts the scaling types not meant to need fine-tuning, as registered when asked.
func rescues(typ string) bool {
	t, ok := position.LookupScaling(typ)
	return ok && !t.NeedsFinetune
}

// The thresholds below were set from measurements across seeds, before the comparison whose
// results are committed was run, and are not tuned to any one run: see each rule.
const (
	// sinusoidalFactor: perplexity at 4x must be at least this multiple of that at 1x. Measured
	// at our scale it is 3 to 5 times; 1.5 leaves room for noise while still meaning "clearly".
	sinusoidalFactor = 1.5
	// alibiTolerance: perplexity at 4x and 16x may exceed that at 1x by at most this fraction.
	// Measured, it is flat to within 2% and usually lower than at 1x (more context).
	alibiTolerance = 0.05
	// rescueFactor: a scaled RoPE's perplexity at 4x and 8x must be at most this fraction of
	// plain RoPE's. Measured, NTK-aware, dynamic NTK and YaRN reach 0.4 to 0.7 of it; 0.85 asks
	// for a clear gain, well outside seed-to-seed spread.
	rescueFactor = 0.85
	// learnedBiasFactor: T5's mean perplexity at 4x and 16x must be at most this fraction of
	// sinusoidal's and plain RoPE's. In the pilot runs before the committed comparison (seed 1,
	// the configs' 1500 steps) it was 0.94 of plain RoPE's at 4x and 0.63 at 16x, and
	// 0.25 and 0.21 of sinusoidal's (committed means); 0.85 asks for a clear gain, as
	// rescueFactor does.
	learnedBiasFactor = 0.85
	// noWorseTolerance: "no worse than" allows this fraction above the reference's mean
	// perplexity. ALiBi's seed-to-seed standard deviation at 16x is 0.5% of its mean in the
	// committed comparison before these schemes were added; 2% is four of those. In the pilot
	// runs (seed 1), KERPLE reached 0.93 of ALiBi's committed mean at 16x, FIRE 1.40 of it.
	noWorseTolerance = 0.02
	// lognFactor: with log-n scaling, perplexity at 16x must be at most this fraction of the
	// same scheme's without it: a gain beyond RoPE's seed-to-seed spread at 16x (6% of its
	// mean). In the pilot runs before the committed comparison (seed 1, the same weights as the
	// unscaled runs, since the factor is 1 up to the training length), it was 1.05 of NoPE's
	// (14.99 against 14.21) and 1.13 of RoPE's (28.2 against 24.9).
	lognFactor = 0.95
	// mixFactor: the RoPE/NoPE mix's perplexity at 16x must be at most this fraction of plain
	// RoPE's, a clear gain as rescueFactor asks. In the pilot run before the committed
	// comparison (seed 1), the [rope, nope] mix of our two layers reached 1.13 of plain RoPE's
	// committed mean (26.5 against 23.4).
	mixFactor = 0.85
	// relativeTolerance bounds |score(i, i-δ) - score(δ, 0)| for unit q and k: float64
	// rounding only.
	relativeTolerance = 1e-9
)

var learnedNotApplicable = claim{
	id:        "learned_not_applicable",
	statement: "Learned absolute positions cannot be evaluated past their table (max_len)",
	rule:      "every length above max_len is recorded as not applicable with a reason, for every seed, and every length up to max_len is scored.",
	check:     checkLearned,
	relevant:  onCorpus,
}

var sinusoidalDegrades = claim{
	id:        "sinusoidal_degrades",
	statement: "Sinusoidal encodings fall apart past the training length: perplexity at 4x is clearly worse than at 1x",
	rule:      fmt.Sprintf("mean perplexity at 4x ≥ %g × mean perplexity at 1x, and the same holds for every seed (at our scale it is 3 to 5 times).", sinusoidalFactor),
	check:     checkSinusoidal,
	relevant:  onCorpus,
}

var alibiFlat = claim{
	id:        "alibi_flat",
	statement: "ALiBi keeps its perplexity flat: at 4x and 16x no worse than at 1x",
	rule:      fmt.Sprintf("mean perplexity at 4x and at 16x ≤ (1 + %g) × mean perplexity at 1x (a %g%% tolerance; measured, ALiBi stays within 2%% and mostly improves with more context).", alibiTolerance, alibiTolerance*100),
	check:     checkALiBi,
	relevant:  onCorpus,
}

var scalingRescuesRoPE = claim{
	id:        "scaling_rescues_rope",
	statement: "RoPE scalings meant to work without fine-tuning (" + strings.Join(rescuers(), ", ") + ") rescue RoPE: at 4x and 8x clearly better than plain RoPE",
	rule:      fmt.Sprintf("for each of these scalings in the comparison, mean perplexity at 4x and at 8x ≤ %g × plain RoPE's mean at that length (plain RoPE from the comparison's unscaled rope run, or else the same weights evaluated unscaled).", rescueFactor),
	check:     checkRescue,
	relevant:  onCorpus,
}

var t5Extrapolates = claim{
	id:        "t5_extrapolates",
	statement: "T5's learned relative bias extrapolates better than sinusoidal and plain RoPE at 4x and 16x (Press et al. 2022, Figure 1)",
	rule:      fmt.Sprintf("T5's mean perplexity at 4x and at 16x ≤ %g × that of sinusoidal and of plain RoPE at the same length.", learnedBiasFactor),
	check:     checkT5,
	relevant:  onCorpus,
}

var kerpleMatchesALiBi = claim{
	id:        "kerple_matches_alibi",
	statement: "KERPLE (logarithmic) at 16x is no worse than ALiBi (Chi et al. 2022)",
	rule:      fmt.Sprintf("KERPLE's mean perplexity at 16x ≤ (1 + %g) × ALiBi's.", noWorseTolerance),
	check:     checkKERPLE,
	relevant:  onCorpus,
}

var fireMatchesALiBiKERPLE = claim{
	id:        "fire_matches_alibi_kerple",
	statement: "FIRE at 16x is no worse than ALiBi and KERPLE (Li et al. 2024)",
	rule:      fmt.Sprintf("FIRE's mean perplexity at 16x ≤ (1 + %g) × ALiBi's and ≤ (1 + %g) × KERPLE's.", noWorseTolerance, noWorseTolerance),
	check:     checkFIRE,
	relevant:  onCorpus,
}

var lognHelps = claim{
	id:        "logn_helps",
	statement: "Log-n attention scaling at inference only lowers NoPE's and RoPE's perplexity at 16x (Qwen's logn_attn)",
	rule:      fmt.Sprintf("for NoPE and for RoPE, mean perplexity at 16x with attention.scale logn ≤ %g × without it.", lognFactor),
	check:     func(rep *judging) (Verdict, string) { return checkLogN(rep, "logn") },
	relevant:  onCorpus,
}

var lognTrainHelps = claim{
	id:        "logn_train_helps",
	statement: "Log-length scaled attention, in training and at inference, lowers NoPE's and RoPE's perplexity at 16x (Chiang & Cholak 2022)",
	rule:      fmt.Sprintf("for NoPE and for RoPE, mean perplexity at 16x with attention.scale logn_train ≤ %g × without it (the threshold of logn_helps, set before either ran).", lognFactor),
	check:     func(rep *judging) (Verdict, string) { return checkLogN(rep, "logn_train") },
	relevant:  onCorpus,
}

var mixExtrapolates = claim{
	id:        "mix_extrapolates",
	statement: "A RoPE/NoPE mix of layers extrapolates better than all-RoPE at 16x (Yang et al. 2025, Llama 4's layout)",
	rule:      fmt.Sprintf("the mix's mean perplexity at 16x ≤ %g × plain RoPE's.", mixFactor),
	check:     checkMix,
	relevant:  onCorpus,
}

// swanLayoutFlat is judged on the layout alone: the paper's dynamic scaling of the scores at
// inference, which it says enhances the layout's extrapolation, is not built (its formula was
// in no source reachable here; docs/references.md#swan-gpt). Its tolerance is the maps' flat
// claims' (mapFlatTolerance); the pilot before the committed runs (seed 7, 1500 steps at 64
// tokens, configs/swan_layout.yaml): 6.668 at 1x, 6.583 at 4x, 6.723 at 16x (1.008).
var swanLayoutFlat = claim{
	id:        "swan_layout_flat",
	statement: "SWAN-GPT's layout, sliding-window RoPE layers interleaved with full-attention NoPE layers, stays flat past the training length (Puvvada et al. 2025), here without its scaling at inference",
	rule:      fmt.Sprintf("for each run of the layout, mean perplexity at 16x ≤ (1 + %g) × the same run's mean at 1x.", mapFlatTolerance),
	check:     func(rep *judging) (Verdict, string) { return rep.flat(swanLayout, 16, mapFlatTolerance) },
	relevant:  with(onCorpus, swanLayout),
}

var ropeRelative = claim{
	id:        "rope_relative",
	statement: "RoPE's attention score depends only on the relative distance",
	rule:      fmt.Sprintf("for each RoPE run's rotation (scaled ones included) at the longest length, and random q and k, |q·k at (i, i-δ) − q·k at (δ, 0)| ≤ %g over all i and δ; the unit test position.TestRoPERelative checks the same (go test ./position -run TestRoPERelative).", relativeTolerance),
	check:     checkRelative,
	relevant:  onCorpus,
}

func checkLearned(rep *judging) (Verdict, string) {
	var ev []string
	found := false
	ok := true
	for _, r := range rep.Runs {
		if !anyLearned.matches(r.Config()) || !r.Result.OK() {
			continue
		}
		p := struct {
			MaxLen int `yaml:"max_len"`
		}{MaxLen: r.Config().Train.SeqLen}
		if err := r.Config().Position.Decode(&p); err != nil {
			return NotReproduced, fmt.Sprintf("%s: %v", r.Label, err)
		}
		maxLen := p.MaxLen
		var scored, na []string
		for _, l := range r.Result.Lengths {
			switch {
			case l.Length > maxLen && !l.Applicable && l.Reason != "":
				na = append(na, fmt.Sprint(l.Length))
				found = true
			case l.Length <= maxLen && l.Applicable:
				scored = append(scored, fmt.Sprint(l.Length))
			default:
				ok = false
				ev = append(ev, fmt.Sprintf("%s seed %d: length %d (max_len %d) applicable=%v", r.Label, r.Seed, l.Length, maxLen, l.Applicable))
			}
		}
		ev = append(ev, fmt.Sprintf("%s seed %d (max_len %d): scored at %s; not applicable at %s", r.Label, r.Seed, maxLen, orDash(scored), orDash(na)))
	}
	if !found {
		return NotApplicable, "No learned run has an evaluation length past its max_len."
	}
	if !ok {
		return NotReproduced, strings.Join(ev, "; ") + "."
	}
	return Reproduced, strings.Join(ev, "; ") + "."
}

func orDash(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

func checkSinusoidal(rep *judging) (Verdict, string) {
	ss := rep.selectAll(plainSinusoidal)
	if len(ss) == 0 {
		return NotApplicable, "The comparison has no sinusoidal run."
	}
	verdict := Reproduced
	var ev []string
	for _, s := range ss {
		one, ok1 := rep.At(s, 1)
		four, ok4 := rep.At(s, 4)
		if !ok1 {
			return rep.missing(s, 1)
		}
		if !ok4 {
			return rep.missing(s, 4)
		}
		r := four.PPLMean / one.PPLMean
		rep.consider(Deciding{What: s.Label + " at 4x / at 1x", Ratio: r, Limit: sinusoidalFactor, AtLeast: true},
			s.Label, 4*rep.TrainLen, s.Label, rep.TrainLen)
		ev = append(ev, fmt.Sprintf("%s: perplexity %s at 1x, %s at 4x: %.2f times", s.Label, measure.FormatStat(one), measure.FormatStat(four), r))
		if r < sinusoidalFactor {
			verdict = NotReproduced
		}
		a, b := rep.PerSeed(s.Label, rep.TrainLen), rep.PerSeed(s.Label, 4*rep.TrainLen)
		for seed, x := range a {
			if y, ok := b[seed]; ok {
				ev = append(ev, fmt.Sprintf("seed %d %.2f → %.2f (%.2fx)", seed, x, y, y/x))
				if y/x < sinusoidalFactor {
					verdict = NotReproduced
				}
			}
		}
	}
	return verdict, sortedEvidence(ev)
}

func checkALiBi(rep *judging) (Verdict, string) {
	ss := rep.selectAll(plainALiBi)
	if len(ss) == 0 {
		return NotApplicable, "The comparison has no ALiBi run."
	}
	verdict := Reproduced
	var ev []string
	for _, s := range ss {
		one, ok := rep.At(s, 1)
		if !ok {
			return rep.missing(s, 1)
		}
		for _, m := range []int{4, 16} {
			st, ok := rep.At(s, m)
			if !ok {
				return rep.missing(s, m)
			}
			r := st.PPLMean / one.PPLMean
			rep.consider(Deciding{What: fmt.Sprintf("%s at %dx / at 1x", s.Label, m), Ratio: r, Limit: 1 + alibiTolerance},
				s.Label, m*rep.TrainLen, s.Label, rep.TrainLen)
			ev = append(ev, fmt.Sprintf("%s: %s at 1x, %s at %dx (%+.1f%%)", s.Label, measure.FormatStat(one), measure.FormatStat(st), m, 100*(r-1)))
			if r > 1+alibiTolerance {
				verdict = NotReproduced
			}
		}
	}
	return verdict, strings.Join(ev, "; ") + "."
}

func checkRescue(rep *judging) (Verdict, string) {
	scaled := rep.selectAll(rescuedRoPE)
	if len(scaled) == 0 {
		return NotApplicable, "The comparison has no RoPE run with a scaling meant to work without fine-tuning (" + strings.Join(rescuers(), ", ") + ")."
	}
	plain, err := rep.the(plainRoPE)
	if err != nil && !errors.Is(err, errNoSeries) {
		return NotApplicable, notOne(err)
	}
	verdict := Reproduced
	var ev []string
	for _, s := range scaled {
		for _, m := range []int{4, 8} {
			st, ok := rep.At(s, m)
			if !ok {
				return rep.missing(s, m)
			}
			ref, refName, v, why := rep.rescueReference(plain, s, m)
			if why != "" {
				return v, why
			}
			refLabel := "" // the same weights unscaled have no per-seed series of their own
			if plain != nil {
				refLabel = refName
			}
			r := st.PPLMean / ref.PPLMean
			rep.consider(Deciding{What: fmt.Sprintf("%s / %s at %dx", s.Label, refName, m), Ratio: r, Limit: rescueFactor},
				s.Label, m*rep.TrainLen, refLabel, m*rep.TrainLen)
			ev = append(ev, fmt.Sprintf("%s at %dx: %s against %s's %s (%.2f of it)", s.Label, m, measure.FormatStat(st), refName, measure.FormatStat(ref), r))
			if r > rescueFactor {
				verdict = NotReproduced
			}
		}
	}
	return verdict, strings.Join(ev, "; ") + "."
}

// rescueReference is plain RoPE's perplexity at mult times the training length, to compare the
// scaled series s with: plain's, or without a plain RoPE series, s's own weights evaluated
// unscaled. When there is none, why says so, with the verdict it leaves.
func (rep *judging) rescueReference(plain, s *measure.Series, mult int) (ref measure.Stat, name string, v Verdict, why string) {
	if plain != nil {
		if ref, ok := rep.At(plain, mult); ok {
			return ref, plain.Label, "", ""
		}
		v, why = rep.missing(plain, mult)
		return measure.Stat{}, "", v, why
	}
	ok := false
	for _, u := range s.Unscaled {
		if u.Length == mult*rep.TrainLen {
			ref, ok = u, u.Seeds > 0
			if u.NonFinite != nil {
				return measure.Stat{}, "", Undecided, fmt.Sprintf("%s unscaled at %dx the training length: %s for seeds %v.", s.Label, mult, u.NonFiniteReason, u.NonFinite)
			}
		}
	}
	if !ok {
		return measure.Stat{}, "", NotApplicable, "No plain RoPE perplexity to compare with at " + fmt.Sprint(mult) + "x."
	}
	return ref, "the same weights unscaled", "", ""
}

func checkRelative(rep *judging) (Verdict, string) {
	var ev []string
	verdict := NotApplicable
	seen := map[string]bool{}
	if len(rep.Lengths) == 0 {
		return NotApplicable, "The comparison has no evaluation length."
	}
	n := rep.Lengths[len(rep.Lengths)-1]
	for _, r := range rep.Runs {
		c := r.Config()
		if !anyRoPE.matches(c) || seen[r.Label] {
			continue
		}
		seen[r.Label] = true
		_, s := r.Resolved.Schemes()
		rot, err := position.RotationAt(s, n)
		if err == nil && rot == nil {
			return NotReproduced, fmt.Sprintf("%s: the scheme does not rotate", r.Label)
		}
		if err != nil {
			return NotReproduced, fmt.Sprintf("%s: no rotation: %v", r.Label, err)
		}
		worst := relativeError(rot, c.Model.DModel/c.Model.Heads, n)
		ev = append(ev, fmt.Sprintf("%s: largest deviation %.1e over %d positions", r.Label, worst, n))
		if verdict == NotApplicable {
			verdict = Reproduced
		}
		if worst > relativeTolerance {
			verdict = NotReproduced
		}
	}
	if verdict == NotApplicable {
		return verdict, "The comparison has no RoPE run."
	}
	return verdict, strings.Join(ev, "; ") + "."
}

// relativeError rotates random unit q and k to every position and returns the largest
// difference between the score at (i, i-δ) and at (δ, 0).
func relativeError(rot *position.Rotation, d, n int) float64 {
	rng := rand.New(rand.NewPCG(1, 2))
	q, k := make([]float64, d), make([]float64, d)
	for i := range q {
		q[i], k[i] = rng.NormFloat64(), rng.NormFloat64()
	}
	dot := func(a, b []float64) float64 {
		s := 0.0
		for i := range a {
			s += a[i] * b[i]
		}
		return s
	}
	worst := 0.0
	step := max(1, n/64)
	for dist := 0; dist < n; dist += step {
		ref := dot(rot.Apply(q, dist), rot.ApplyKey(k, 0))
		for i := dist; i < n; i += step {
			worst = math.Max(worst, math.Abs(dot(rot.Apply(q, i), rot.ApplyKey(k, i-dist))-ref))
		}
	}
	return worst
}

func sortedEvidence(ev []string) string {
	head, rest := ev[0], ev[1:]
	sort.Strings(rest)
	return strings.Join(append([]string{head}, rest...), "; ") + "."
}

// compareAt judges whether the one series subject selects has a mean perplexity at each
// multiple at most limit times that of the one series each reference selects, and says with
// which numbers. The messages name the schemes, as the claims' statements do.
func (rep *judging) compareAt(subject selector, refs []selector, mults []int, limit float64) (Verdict, string) {
	s, err := rep.the(subject)
	if errors.Is(err, errNoSeries) {
		return NotApplicable, fmt.Sprintf("The comparison has no %s run.", subject.Scheme)
	}
	if err != nil {
		return NotApplicable, notOne(err)
	}
	var rs []*measure.Series
	for _, ref := range refs {
		r, err := rep.the(ref)
		if errors.Is(err, errNoSeries) {
			return NotApplicable, fmt.Sprintf("The comparison has no %s run to compare %s with.", ref.Scheme, subject.Scheme)
		}
		if err != nil {
			return NotApplicable, notOne(err)
		}
		rs = append(rs, r)
	}
	return rep.compareSeries(s, rs, mults, limit)
}

// compareSeries judges whether s's mean perplexity at each multiple is at most limit times each
// reference's.
func (rep *judging) compareSeries(s *measure.Series, refs []*measure.Series, mults []int, limit float64) (Verdict, string) {
	verdict := Reproduced
	var ev []string
	for _, r := range refs {
		for _, m := range mults {
			a, ok1 := rep.At(s, m)
			b, ok2 := rep.At(r, m)
			if !ok1 {
				return rep.missing(s, m)
			}
			if !ok2 {
				return rep.missing(r, m)
			}
			ratio := a.PPLMean / b.PPLMean
			n := m * rep.TrainLen
			rep.consider(Deciding{What: fmt.Sprintf("%s / %s at %dx", s.Label, r.Label, m), Ratio: ratio, Limit: limit},
				s.Label, n, r.Label, n)
			ev = append(ev, fmt.Sprintf("%s at %dx: %s against %s's %s (%.2f of it)", s.Label, m, measure.FormatStat(a), r.Label, measure.FormatStat(b), ratio))
			if ratio > limit {
				verdict = NotReproduced
			}
		}
	}
	return verdict, strings.Join(ev, "; ") + "."
}

// checkLogN compares NoPE and RoPE with the log-n temperature form to the same schemes without it.
func checkLogN(rep *judging, form string) (Verdict, string) {
	verdict, found := Reproduced, false
	var ev []string
	for _, without := range []selector{plainNoPE, plainRoPE} {
		with := without
		with.Name, with.Temperature = without.Name+" with "+form, is(form)
		scaled, err1 := rep.the(with)
		plain, err2 := rep.the(without)
		if err := firstErr(err1, err2); err != nil {
			if errors.Is(err, errNoSeries) {
				ev = append(ev, fmt.Sprintf("no %s run with and without %s", without.Scheme, form))
			} else {
				ev = append(ev, strings.TrimSuffix(notOne(err), "."))
			}
			continue
		}
		v, e := rep.compareSeries(scaled, []*measure.Series{plain}, []int{16}, lognFactor)
		found = found || v != NotApplicable
		// Not reproduced for one scheme decides the claim; otherwise an undecided or
		// inapplicable half leaves it so.
		if v == NotReproduced || v != Reproduced && verdict != NotReproduced {
			verdict = v
		}
		ev = append(ev, strings.TrimSuffix(e, "."))
	}
	if !found {
		return NotApplicable, fmt.Sprintf("The comparison has no NoPE or RoPE run with and without %s.", form)
	}
	return verdict, strings.Join(ev, "; ") + "."
}

// checkMix compares a RoPE/NoPE mix with all-RoPE.
func checkMix(rep *judging) (Verdict, string) {
	mix, err1 := rep.the(ropeNoPEMix)
	rope, err2 := rep.the(plainRoPE)
	if err := firstErr(err1, err2); err != nil {
		if errors.Is(err, errNoSeries) {
			return NotApplicable, "The comparison has no RoPE/NoPE mix and plain RoPE run."
		}
		return NotApplicable, notOne(err)
	}
	return rep.compareSeries(mix, []*measure.Series{rope}, []int{16}, mixFactor)
}

func checkT5(rep *judging) (Verdict, string) {
	return rep.compareAt(plainT5, []selector{plainSinusoidal, plainRoPE}, []int{4, 16}, learnedBiasFactor)
}

func checkKERPLE(rep *judging) (Verdict, string) {
	return rep.compareAt(plainKERPLE, []selector{plainALiBi}, []int{16}, 1+noWorseTolerance)
}

func checkFIRE(rep *judging) (Verdict, string) {
	return rep.compareAt(plainFIRE, []selector{plainALiBi, plainKERPLE}, []int{16}, 1+noWorseTolerance)
}

// rescuers are the registered scaling types that are not meant to need fine-tuning.
func rescuers() []string {
	var out []string
	for _, name := range position.ScalingTypes() {
		if t, _ := position.LookupScaling(name); !t.NeedsFinetune {
			out = append(out, name)
		}
	}
	return out
}

// onCorpus reports whether the comparison is not one of task runs alone: the claims on
// perplexity are about language models, not about the Go-source perplexity of a model trained
// on tasks alone.
func onCorpus(rep *judging) bool { return !rep.AllOnTasks() }
