package claims

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"extrapolate/experiments/config"
	"extrapolate/experiments/measure"
	"extrapolate/model"
	"extrapolate/position"
)

// A selector says which series of a comparison a claim is about, by what their runs are: the
// resolved config of a series' first run, never its label or its place in the comparison, so
// that listing rope_logn before rope cannot make it the claims' plain RoPE. A field left nil
// (or "") accepts anything.
type selector struct {
	// Name says what the selector picks, for the report: "plain RoPE".
	Name string
	// Scheme is position.scheme; "mix" for schemes mixed by layer (position.layers).
	Scheme string
	// Scaling is position.scaling's type, "" when there is none.
	Scaling accepts
	// Temperature is attention.scale, "" when there is none; Normaliser attention.normaliser
	// ("" for the softmax), Gate attention.gate and Sinks attention.sinks ("set" when true).
	Temperature, Normaliser, Gate, Sinks accepts
	// Finetune, Passkey and DroPE are train.finetune, train.passkey and train.drope, by
	// whether they are given: "" when not, "set" when they are.
	Finetune, Passkey, DroPE accepts
	// Map is position.distance_map's type, "" when there is none; Window is position.window,
	// "" when there is none (0).
	Map, Window accepts
	// Positions is train.positions' type, "" when training sees positions 0..n−1.
	Positions accepts
	// Params lists the scheme's own fields a series may give (position.base, ...): a series
	// giving any other, such as rope's rotary_fraction, is a variant, not selected. Nil
	// accepts any fields.
	Params []string
	// Layers is, for a mix, the set of schemes its layers use, in any order and number;
	// LayerWindow whether some layer has a sliding window of its own ("set") or none ("").
	Layers      []string
	LayerWindow accepts
}

// accepts says which values of one config field a selector takes; "" is the field unset.
type accepts func(string) bool

var (
	unset accepts = func(v string) bool { return v == "" }
	set   accepts = func(v string) bool { return v != "" }
)

// is accepts exactly the given values.
func is(values ...string) accepts {
	return func(v string) bool { return slices.Contains(values, v) }
}

// plain selects a scheme as it is, with none of the things a comparison varies on top of it:
// no scaling, the softmax with no temperature, gate or sink, no fine-tuning, not dropped
// (DroPE), no distance map or window, no drawn position ids, and of its own fields only params.
func plain(name, scheme string, params ...string) selector {
	if params == nil {
		params = []string{}
	}
	return selector{Name: name, Scheme: scheme, Scaling: unset, Temperature: unset, Normaliser: unset, Gate: unset, Sinks: unset,
		Finetune: unset, DroPE: unset, Map: unset, Window: unset, Positions: unset, Params: params}
}

// plainRoPE is the reference of every claim that compares with RoPE, and of the comparison's
// figures: RoPE at any base, whole (no rotary_fraction), unscaled, without temperature,
// fine-tune or DroPE.
var plainRoPE = plain("plain RoPE", "rope", "base")

// matches reports whether a run's config is one the selector picks.
func (s selector) matches(c config.Config) bool {
	p := c.Position
	scaling := ""
	if p.Scaling != nil {
		scaling = p.Scaling.Type
	}
	distanceMap, window, positions := "", "", ""
	if p.DistanceMap != nil {
		distanceMap = p.DistanceMap.Type
	}
	if ids := c.Train.Positions; ids != nil {
		positions = ids.Type
	}
	if p.Window > 0 {
		window = fmt.Sprint(p.Window)
	}
	normaliser := c.Attention.Normaliser
	if normaliser == model.Softmax {
		normaliser = ""
	}
	ok := func(a accepts, v string) bool { return a == nil || a(v) }
	return (s.Scheme == "" || p.Scheme == s.Scheme) &&
		ok(s.Scaling, scaling) &&
		ok(s.Temperature, c.Attention.Scale) &&
		ok(s.Normaliser, normaliser) && ok(s.Gate, c.Attention.Gate) && ok(s.Sinks, given(c.Attention.Sinks)) &&
		ok(s.Finetune, given(c.Train.Finetune != nil)) &&
		ok(s.Passkey, given(c.Train.Passkey != nil)) &&
		ok(s.DroPE, given(c.Train.DroPE != nil)) &&
		ok(s.Map, distanceMap) && ok(s.Window, window) && ok(s.Positions, positions) &&
		s.paramsMatch(p) && s.layersMatch(p) && ok(s.LayerWindow, given(p.Window == 0 && p.Windowed()))
}

func given(b bool) string {
	if b {
		return "set"
	}
	return ""
}

func (s selector) paramsMatch(p position.Config) bool {
	if s.Params == nil {
		return true
	}
	for k := range p.Params {
		if !slices.Contains(s.Params, k) {
			return false
		}
	}
	return true
}

// layersMatch compares the set of schemes a mix's layers name, each a name or a section with
// a scheme, with s.Layers.
func (s selector) layersMatch(p position.Config) bool {
	if s.Layers == nil {
		return true
	}
	var l struct {
		Layers []any `yaml:"layers"`
	}
	if p.Decode(&l) != nil {
		return false
	}
	seen := map[string]bool{}
	for _, x := range l.Layers {
		name, _ := x.(string)
		if m, ok := x.(map[string]any); ok {
			name, _ = m["scheme"].(string)
		}
		seen[name] = true
	}
	if len(seen) != len(s.Layers) {
		return false
	}
	for _, name := range s.Layers {
		if !seen[name] {
			return false
		}
	}
	return true
}

// selectAll returns the series the selector picks, in the comparison's order.
func (rep *judging) selectAll(s selector) []*measure.Series {
	return rep.SeriesWhere(s.matches)
}

// the returns the one series the selector picks. A claim compares with one series, so none
// or several is an error, saying which: the claim is then not applicable, rather than judged
// against whichever came first.
func (rep *judging) the(s selector) (*measure.Series, error) { return s.the(rep.Report) }

// the is judging.the on the aggregate alone.
func (s selector) the(rep *measure.Report) (*measure.Series, error) {
	ss := rep.SeriesWhere(s.matches)
	switch len(ss) {
	case 0:
		return nil, errNoSeries
	case 1:
		return ss[0], nil
	}
	var labels []string
	for _, x := range ss {
		labels = append(labels, x.Label)
	}
	return nil, fmt.Errorf("%s are each %s; the claim needs one", strings.Join(labels, ", "), s.Name)
}

// PlainRoPE is the label of the one series of the aggregate that is plain RoPE, the reference
// every claim that compares with RoPE uses and every figure draws (measure.Report.PlainRoPE);
// "" when there is none, or several.
func PlainRoPE(rep *measure.Report) string {
	s, err := plainRoPE.the(rep)
	if err != nil {
		return ""
	}
	return s.Label
}

// errNoSeries: no series is the one a claim asks for; each claim says so in its own words.
var errNoSeries = errors.New("no such series")

// notOne is the evidence of a claim left not applicable by a selector that picked several
// series (the's error).
func notOne(err error) string {
	return "The comparison's runs " + err.Error() + "."
}

// firstErr returns, of the errors of several lookups, the first that names series picked
// together, else errNoSeries if one found none: several series are the thing to fix first.
func firstErr(errs ...error) error {
	var none error
	for _, err := range errs {
		switch {
		case err == nil:
		case errors.Is(err, errNoSeries):
			none = err
		default:
			return err
		}
	}
	return none
}
