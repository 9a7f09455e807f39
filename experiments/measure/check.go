package measure

// What a report checks of a run's files before it reads a number from them. A file that was
// truncated, edited or copied from elsewhere must stop the report with what is wrong, not show
// as "not applicable" or silently drop a run: a run's own numbers are never made up, so every
// one a report reads is checked against what the run, from its config, must have written.

import (
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"extrapolate/experiments/config"
	"extrapolate/position"
)

// CheckResult checks a run's results file, as read, against the run's config: a status it can
// have, and for a finished run every evaluation length of the config once, in order, each with
// numbers it can have; a length is not applicable only where the run's scheme says it cannot
// take that many positions. The same holds of the lengths evaluated without a RoPE scaling,
// which a run with one has and no other run has.
func CheckResult(res *Result, rc *config.Resolved) error {
	switch res.Status {
	case "ok":
	case "failed":
		if res.Error == "" {
			return errors.New("status: failed, but no error says why")
		}
		return nil // a diverged run has no lengths
	default:
		return fmt.Errorf("status: %q, want ok or failed", res.Status)
	}
	c := rc.Config()
	train, eval := rc.Schemes()
	if err := checkLengths("lengths", res.Lengths, c, eval); err != nil {
		return err
	}
	switch {
	case c.Position.Scaling != nil && res.Unscaled == nil:
		return errors.New("unscaled: missing; a run with a RoPE scaling is evaluated without it as well")
	case c.Position.Scaling == nil && res.Unscaled != nil:
		return errors.New("unscaled: given, but the run has no RoPE scaling")
	case res.Unscaled != nil:
		// The weights without the scaling: the main phase's scheme.
		return checkLengths("unscaled", res.Unscaled, c, train)
	}
	return nil
}

// checkLengths checks a run's results by length, of the field named, against the config's
// evaluation lengths and the scheme they were evaluated with.
func checkLengths(field string, ls []LengthResult, c config.Config, s position.Scheme) error {
	got := make([]int, len(ls))
	for i, l := range ls {
		got[i] = l.Length
	}
	if err := SameLengths(field, got, c.Eval.Lengths); err != nil {
		return err
	}
	for _, l := range ls {
		if err := checkLength(l, c, s); err != nil {
			return fmt.Errorf("%s: length %d: %w", field, l.Length, err)
		}
	}
	return nil
}

// SameLengths says how the lengths of a file's field differ from the config's, which it must
// hold once each and in order; nil when they do not.
func SameLengths(field string, got, want []int) error {
	wantList := "the config evaluates at " + intList(want)
	if len(got) == 0 {
		return fmt.Errorf("%s: none; %s", field, wantList)
	}
	for i, n := range want {
		switch {
		case i < len(got) && got[i] == n:
			continue
		case i < len(got) && !slices.Contains(want, got[i]):
			return fmt.Errorf("%s: length %d, not one of the config's; %s", field, got[i], wantList)
		case !slices.Contains(got, n):
			return fmt.Errorf("%s: length %d missing; %s", field, n, wantList)
		}
		return fmt.Errorf("%s: lengths %s, out of order or given twice; %s", field, intList(got), wantList)
	}
	if len(got) > len(want) {
		if !slices.Contains(want, got[len(want)]) {
			return fmt.Errorf("%s: length %d, not one of the config's; %s", field, got[len(want)], wantList)
		}
		return fmt.Errorf("%s: lengths %s, some given twice; %s", field, intList(got), wantList)
	}
	return nil
}

// checkLength checks one length's result: not applicable exactly where the scheme cannot take
// the length, scored on the config's tokens, and with numbers a mean cross-entropy can have (at
// least 0, so a perplexity of at least 1, its exponential) unless they were not finite.
func checkLength(l LengthResult, c config.Config, s position.Scheme) error {
	why, err := NotTaken(s, c.Model.Layers, l.Length)
	if err != nil {
		return err
	}
	takes := why == ""
	switch {
	case !l.Applicable && takes:
		return fmt.Errorf("not applicable (%q), but the scheme takes %d positions: only the scheme declares a length not applicable", l.Reason, l.Length)
	case !l.Applicable && l.Reason == "":
		return errors.New("not applicable, without the reason")
	case !l.Applicable && (l.NonFinite || l.Loss != nil || l.Perplexity != nil):
		return errors.New("not applicable, yet with a loss or perplexity")
	case !l.Applicable:
		return nil
	case !takes:
		return fmt.Errorf("scored, but the scheme cannot take %d positions (%s)", l.Length, why)
	case l.Tokens != c.Eval.Tokens:
		return fmt.Errorf("tokens: %d, want eval.tokens %d: every length scores the same tokens", l.Tokens, c.Eval.Tokens)
	case l.NonFinite && l.Reason == "":
		return errors.New("not finite, without the reason")
	case l.NonFinite && l.Perplexity != nil:
		return errors.New("not finite, yet with a perplexity")
	case l.NonFinite:
		return nil
	case l.Loss == nil || l.Perplexity == nil:
		return errors.New("scored, but without a loss or perplexity")
	}
	loss, ppl := *l.Loss, *l.Perplexity
	switch {
	case !(loss >= 0) || math.IsInf(loss, 0):
		return fmt.Errorf("loss %v, want a finite number of at least 0 (a cross-entropy)", loss)
	case !(ppl >= 1) || math.IsInf(ppl, 0):
		return fmt.Errorf("perplexity %v, want a finite number of at least 1", ppl)
	case math.Abs(ppl-math.Exp(loss)) > 1e-9*ppl:
		// The run writes exp(loss); the margin only allows for exp's last bits on another
		// processor.
		return fmt.Errorf("perplexity %v, but the loss %v gives %v", ppl, loss, math.Exp(loss))
	}
	return nil
}

// NotTaken asks the scheme whether it can take n positions, as the model does before
// evaluating (position.Check, with its weights at zero), and every layer's scheme of a mix: the
// reason one gives (an error wrapping position.ErrNotApplicable) when it cannot, "" when it
// can. Any other error means the scheme cannot be asked, which the config's checks refuse.
func NotTaken(s position.Scheme, layers, n int) (string, error) {
	for _, o := range position.Owners(s, layers) {
		err := position.Check(o, n)
		if errors.Is(err, position.ErrNotApplicable) {
			return err.Error(), nil
		}
		if err != nil {
			return "", fmt.Errorf("the scheme cannot be asked about %d positions: %w", n, err)
		}
	}
	return "", nil
}

// intList writes lengths as "64, 128, 256".
func intList(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ", ")
}

// ReadRunFile reads a file a run must have written, for a report: its absence is an error that
// says so, not an empty result.
func ReadRunFile(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%s: missing, but the run's results say it finished", path)
	}
	if err != nil {
		return nil, err
	}
	return b, nil
}

// SameRun checks that a measure's file of a run is that run's, as its results file is: its
// run's name and seed, training length and protocol.
func SameRun(r RunResult, name string, seed uint64, trainLen int, protocol string) error {
	c := r.Config()
	switch {
	case name != c.Name || seed != c.Seed:
		return fmt.Errorf("holds run %s seed %d's, not %s seed %d's", name, seed, c.Name, c.Seed)
	case trainLen != c.Train.SeqLen:
		return fmt.Errorf("train_len: %d, but the run trains at %d", trainLen, c.Train.SeqLen)
	case protocol != c.Eval.Protocol():
		return fmt.Errorf("protocol: %q, but the run evaluates in %s", protocol, c.Eval.Protocol())
	}
	return nil
}
