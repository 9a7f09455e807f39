package position

import (
	"fmt"
	"slices"

	G "gorgonia.org/gorgonia"
)

// This file is the one walk over the optional interfaces of a scheme, a temperature and a
// distance map, as database/sql's ctxutil.go is over a driver's: each function takes a scheme
// (or temperature, or map), asks for the interface it needs, and falls back to what one without
// it means (no table, no rotation, no bias, no factor, no weights, no bound on lengths, a map
// for rotary schemes only). The model, Check, Mix and cmd/inspect ask through these functions
// only, so what a missing or doubled interface means is decided here, once. A scheme with a
// sliding window (window.go) is unwrapped first, so that its window changes no answer.

// Form says whether a scheme adds a piece (a table to the embeddings, a bias to the scores, a
// factor on a query's scores), and whether it computes it from weights.
type Form int

const (
	// Absent is a piece the scheme does not add.
	Absent Form = iota
	// Fixed is a piece of fixed numbers (Embedder, Biaser, QueryScaler).
	Fixed
	// FromWeights is a piece computed from the scheme's weights (LearnedEmbedder,
	// LearnedBiaser, LearnedQueryScaler).
	FromWeights
)

// TableForm says whether s adds a table to the token embeddings, and which kind. A scheme that
// gives both a fixed and a learned table is an error: the model would not know which to add.
func TableForm(s Scheme) (Form, error) {
	s = unwrap(s)
	_, fixed := s.(Embedder)
	_, learned := s.(LearnedEmbedder)
	return formOf("the "+s.Name()+" scheme", "table", fixed, learned)
}

// BiasForm says whether s adds a bias to the attention scores, and which kind, as TableForm.
func BiasForm(s Scheme) (Form, error) {
	s = unwrap(s)
	_, fixed := s.(Biaser)
	_, learned := s.(LearnedBiaser)
	_, graph := s.(GraphBiaser)
	if learned && graph {
		return Absent, fmt.Errorf("position: the %s scheme gives its learned bias both with its gradient and as a graph", s.Name())
	}
	return formOf("the "+s.Name()+" scheme", "bias", fixed, learned || graph)
}

func formOf(owner, piece string, fixed, learned bool) (Form, error) {
	switch {
	case fixed && learned:
		return Absent, fmt.Errorf("position: %s gives both a fixed and a learned %s", owner, piece)
	case fixed:
		return Fixed, nil
	case learned:
		return FromWeights, nil
	}
	return Absent, nil
}

// TableAt returns the table s adds to the embeddings at n positions, computed from its weights
// w (in the order it declares them) when it is learned; nil when s adds none.
func TableAt(s Scheme, w [][]float64, n int) (*Table, error) {
	s = unwrap(s)
	form, err := TableForm(s)
	switch {
	case err != nil:
		return nil, err
	case form == Fixed:
		return s.(Embedder).Embedding(n)
	case form == FromWeights:
		return s.(LearnedEmbedder).LearnedEmbedding(w, n)
	}
	return nil, nil
}

// TableGrad adds to dw the gradient through the learned table of s at n positions, given
// dTable, the gradient with respect to the table; a fixed table or none has no weights to reach.
func TableGrad(s Scheme, w [][]float64, n int, dTable []float64, dw [][]float64) {
	if e, ok := unwrap(s).(LearnedEmbedder); ok {
		e.LearnedEmbeddingGrad(w, n, dTable, dw)
	}
}

// RotationAt returns the rotation of s at n positions, nil for a scheme that does not rotate.
func RotationAt(s Scheme, n int) (*Rotation, error) {
	if r, ok := unwrap(s).(Rotator); ok {
		return r.Rotation(n)
	}
	return nil, nil
}

// BiasAt returns the bias s adds to layer's scores at n positions, computed from its weights w
// when it is learned (a fixed bias is the same in every layer); nil when s adds none.
func BiasAt(s Scheme, w [][]float64, layer, n int) (*Bias, error) {
	s = unwrap(s)
	form, err := BiasForm(s)
	switch {
	case err != nil:
		return nil, err
	case form == Fixed:
		return s.(Biaser).Bias(n)
	case form == FromWeights:
		if b, ok := s.(GraphBiaser); ok {
			return graphBias(b, w, layer, n, nil, nil)
		}
		return s.(LearnedBiaser).LearnedBias(w, layer, n)
	}
	return nil, nil
}

// BiasGrad adds to dw the gradient through layer's learned bias of s at n positions, given dBias,
// the gradient with respect to the bias's values; a fixed bias or none has no weights to reach.
// A GraphBiaser's is gorgonia's, of its expression, which BiasAt has already built once for
// the same weights without error.
func BiasGrad(s Scheme, w [][]float64, layer, n int, dBias []float64, dw [][]float64) {
	switch b := unwrap(s).(type) {
	case LearnedBiaser:
		b.LearnedBiasGrad(w, layer, n, dBias, dw)
	case GraphBiaser:
		if _, err := graphBias(b, w, layer, n, dBias, dw); err != nil {
			panic(err)
		}
	}
}

// BiasGraph returns the node of layer's bias of s at n positions built in g from the nodes of
// its weights w, for a GraphBiaser; nil for any other scheme, whose bias the model computes
// from BiasAt's numbers.
func BiasGraph(s Scheme, g *G.ExprGraph, w []*G.Node, layer, n int) (*G.Node, error) {
	b, ok := unwrap(s).(GraphBiaser)
	if !ok {
		return nil, nil
	}
	return b.GraphBias(g, w, layer, n)
}

// ScoresGraph returns what changes layer's attention scores for s (GraphScorer) from the nodes
// of its weights w, for heads heads at n positions, and nil for any other scheme.
func ScoresGraph(s Scheme, g *G.ExprGraph, w []*G.Node, layer, heads, n int) func(scores *G.Node) (*G.Node, error) {
	sc, ok := unwrap(s).(GraphScorer)
	if !ok {
		return nil
	}
	return func(scores *G.Node) (*G.Node, error) { return sc.GraphScores(g, w, scores, layer, heads, n) }
}

// WeightsGraph returns what turns layer's masked attention scores into its weights for s
// (GraphNormaliser) from the nodes of its weights w, for heads heads at n positions, and nil
// for any other scheme, whose layers take the softmax or the normaliser the config names.
func WeightsGraph(s Scheme, g *G.ExprGraph, w []*G.Node, layer, heads, n int) func(scores, seen *G.Node) (*G.Node, error) {
	nm, ok := unwrap(s).(GraphNormaliser)
	if !ok {
		return nil
	}
	return func(scores, seen *G.Node) (*G.Node, error) {
		return nm.GraphWeights(g, w, scores, seen, layer, heads, n)
	}
}

// NormalisesItself says whether s replaces the softmax with a normaliser of its own
// (GraphNormaliser).
func NormalisesItself(s Scheme) bool {
	_, ok := unwrap(s).(GraphNormaliser)
	return ok
}

// Decomposed says whether s has a stage of attention with no fused kernel, a score stage
// (GraphScorer) or a normaliser (GraphNormaliser), which runs its layers on the stock ops.
func Decomposed(s Scheme) bool {
	switch unwrap(s).(type) {
	case GraphScorer, GraphNormaliser:
		return true
	}
	return false
}

// HasBiasRows says whether s can compute its learned bias one query at a time (BiasRower).
func HasBiasRows(s Scheme) bool {
	_, ok := unwrap(s).(BiasRower)
	return ok
}

// BiasRows returns what writes layer's learned bias of s one query at a time, from the weights
// w as they are now (an evaluation graph's, which never change): in head h, for query i and the
// keys from j0, into dst. It is nil for a scheme that cannot.
func BiasRows(s Scheme, w [][]float64, layer int) func(h, i, j0 int, dst []float64) {
	r, ok := unwrap(s).(BiasRower)
	if !ok {
		return nil
	}
	return func(h, i, j0 int, dst []float64) { r.LearnedBiasRow(w, layer, h, i, j0, dst) }
}

// ForgetGateOf returns the forget gate of s (ForgetGater), and whether it has one.
func ForgetGateOf(s Scheme) (ForgetGate, bool) {
	if f, ok := unwrap(s).(ForgetGater); ok {
		return f.ForgetGate(), true
	}
	return ForgetGate{}, false
}

// StickBreakingOf returns how s normalises attention by stick-breaking (StickBreaker), and
// whether it does; a scheme without it keeps the softmax.
func StickBreakingOf(s Scheme) (StickBreaking, bool) {
	if b, ok := unwrap(s).(StickBreaker); ok {
		return b.StickBreaking(), true
	}
	return StickBreaking{}, false
}

// ContextPositionsOf returns the position embeddings of s (ContextPositioner), and whether it
// has them.
func ContextPositionsOf(s Scheme) (ContextPositions, bool) {
	if c, ok := unwrap(s).(ContextPositioner); ok {
		return c.ContextPositions(), true
	}
	return ContextPositions{}, false
}

// WeightsOf returns the weights s declares, nil for a scheme without weights.
func WeightsOf(s Scheme) []Weight {
	if l, ok := unwrap(s).(Learner); ok {
		return l.Weights()
	}
	return nil
}

// ZeroWeights returns the weights of s, each at zero: what asking a scheme for what it adds
// before a model has made its weights computes with.
func ZeroWeights(s Scheme) [][]float64 {
	var w [][]float64
	for _, x := range WeightsOf(s) {
		w = append(w, make([]float64, x.Size()))
	}
	return w
}

// CheckLength says whether n positions are within the bound the fields of s set, nil for a
// scheme without one.
func CheckLength(s Scheme, n int) error {
	if c, ok := unwrap(s).(LengthChecker); ok {
		return c.CheckLength(n)
	}
	return nil
}

// ScalingOf returns the RoPE scaling in force in s, and whether s takes one at all.
func ScalingOf(s Scheme) (sc *Scaling, takes bool) {
	if c, ok := unwrap(s).(Scalable); ok {
		return c.Scaling(), true
	}
	return nil, false
}

// Describe returns the numbers s gives of itself at n positions, nil for a scheme that gives
// none.
func Describe(s Scheme, n int) map[string]any {
	if d, ok := unwrap(s).(Describer); ok {
		return d.Describe(n)
	}
	return nil
}

// SourcesOf returns the sentence in which s states the sources of its settings (Sourced), "" for
// a scheme that states none.
func SourcesOf(s Scheme) string {
	if src, ok := unwrap(s).(Sourced); ok {
		return src.Sources()
	}
	return ""
}

// LookOf returns how s asks to be drawn (Drawn), false for a scheme that does not ask: its
// family chooses for it. A marker that is not one of Markers is dropped, as if not asked for.
func LookOf(s Scheme) (Look, bool) {
	d, ok := unwrap(s).(Drawn)
	if !ok {
		return Look{}, false
	}
	l := d.Look()
	if !slices.Contains(Markers, l.Marker) {
		l.Marker = ""
	}
	return l, true
}

// IsPerLayer says whether s gives each layer a scheme of its own.
func IsPerLayer(s Scheme) bool {
	_, ok := unwrap(s).(PerLayer)
	return ok
}

// Slot is what acts in one layer of a model: a scheme, the layer's index within that scheme,
// and which of Owners holds its weights.
type Slot struct {
	Scheme       Scheme
	Layer, Owner int
}

// InLayer returns what acts in layer l of a model of s: s itself as its layer l, whose weights
// are the model's first owner's; or, for a PerLayer scheme, layer l's own scheme as its only
// layer, with weights of its own. The scheme keeps its window, which WindowOf reads.
func InLayer(s Scheme, l int) Slot {
	if p, ok := unwrap(s).(PerLayer); ok {
		return Slot{Scheme: p.LayerScheme(l), Layer: 0, Owner: l}
	}
	return Slot{Scheme: s, Layer: l, Owner: 0}
}

// Owners returns the schemes whose weights a model of s with the given number of layers holds,
// in order: s alone, or a PerLayer scheme's scheme of each layer.
func Owners(s Scheme, layers int) []Scheme {
	if !IsPerLayer(s) {
		return []Scheme{s}
	}
	out := make([]Scheme, layers)
	for l := range out {
		out[l] = InLayer(s, l).Scheme
	}
	return out
}

// QueryScaleForm says whether t puts a factor on the queries' scores, and which kind; no
// temperature, a nil t, puts none.
func QueryScaleForm(t Temperature) (Form, error) {
	if t == nil {
		return Absent, nil
	}
	_, fixed := t.(QueryScaler)
	_, learned := t.(LearnedQueryScaler)
	return formOf("the "+t.Name()+" temperature", "query scale", fixed, learned)
}

// QueryScaleAt returns the factors t puts on the queries' scores at n positions, (heads, n),
// computed from one layer's weights w when they are learned; nil when t puts none.
func QueryScaleAt(t Temperature, w [][]float64, n int) ([]float64, error) {
	form, err := QueryScaleForm(t)
	switch {
	case err != nil:
		return nil, err
	case form == Fixed:
		return t.(QueryScaler).QueryScale(n)
	case form == FromWeights:
		return t.(LearnedQueryScaler).LearnedQueryScale(w, n)
	}
	return nil, nil
}

// QueryScaleGrad adds to dw the gradient through the learned factors of t at n positions,
// given dScale, the gradient with respect to them; fixed factors or none have no weights to
// reach.
func QueryScaleGrad(t Temperature, w [][]float64, n int, dScale []float64, dw [][]float64) {
	if q, ok := t.(LearnedQueryScaler); ok {
		q.LearnedQueryScaleGrad(w, n, dScale, dw)
	}
}

// LayerWeightsOf returns the weights t declares for each layer, nil for none.
func LayerWeightsOf(t Temperature) []Weight {
	if q, ok := t.(LearnedQueryScaler); ok {
		return q.LayerWeights()
	}
	return nil
}

// MapsBias says whether m applies to additive-bias schemes too (BiasMapper); a map without it is
// for rotary schemes only.
func MapsBias(m DistanceMap) bool {
	b, ok := m.(BiasMapper)
	return ok && b.MapsBias()
}

// MapMasks says whether m masks keys (Masker), rather than only changing distances.
func MapMasks(m DistanceMap) bool {
	k, ok := m.(Masker)
	return ok && k.Masks()
}

// MapAppliesTo says, with an error naming position.distance_map, whether the distance map m
// applies to a model of s, whose every layer must take it and one at least be changed by it.
// A rotary layer takes every map; a layer with a bias that depends on the distance only (ALiBi,
// T5, KERPLE) the maps that say so (MapsBias); a layer without positions (NoPE) every map, but
// is changed only by one that masks (MapMasks), since it has no distances to change: a model
// of such layers alone refuses a map that would leave it as it is. A table added to the
// embeddings (learned, sinusoidal) places each token at its absolute position, which no map can
// move, and a bias of the query's position too (FIRE) is not a function of one distance a map
// could give: neither takes any. A forget gate (FoX) sums the gates between the key and the
// query at their true positions, whichever keys a map leaves: like NoPE, it takes every map and
// is changed only by one that masks. Stick-breaking takes none: a masked key would have to be
// left out of the product too, which the attention op does not do.
func MapAppliesTo(m DistanceMap, s Scheme) error {
	layers := []Scheme{s}
	if mix, ok := unwrap(s).(*Mix); ok {
		layers = mix.Layers
	} else if IsPerLayer(s) {
		return fmt.Errorf("position.distance_map: cannot tell the layers of the %s scheme", s.Name())
	}
	changed := false
	for l, ls := range layers {
		acts, err := mapActsOn(m, ls)
		if err != nil {
			if len(layers) > 1 {
				return fmt.Errorf("position.distance_map: layer %d: %v", l, err)
			}
			return fmt.Errorf("position.distance_map: %v", err)
		}
		changed = changed || acts
	}
	if !changed {
		return fmt.Errorf("position.distance_map: the %s distance map changes distances only, and the %s scheme has none to change", m.Name(), s.Name())
	}
	return nil
}

// mapActsOn says whether m changes what the scheme s of one layer computes, or why s cannot take
// it.
func mapActsOn(m DistanceMap, s Scheme) (bool, error) {
	if Decomposed(s) {
		return false, fmt.Errorf("the %s scheme changes attention itself, on gorgonia's stock ops, which take no distance map", s.Name())
	}
	if _, ok := StickBreakingOf(s); ok {
		return false, fmt.Errorf("the %s scheme breaks each query's stick over the keys at their true order, and attention does not remap or mask it: it takes no distance map", s.Name())
	}
	if _, ok := ContextPositionsOf(s); ok {
		return false, fmt.Errorf("the %s scheme counts positions from the gates of the keys a query sees, which the %s distance map has no positions to give", s.Name(), m.Name())
	}
	table, err := TableForm(s)
	if err != nil {
		return false, err
	}
	if table != Absent {
		return false, fmt.Errorf("the %s scheme adds absolute positions to the embeddings, which the %s distance map cannot move", s.Name(), m.Name())
	}
	bias, err := BiasForm(s)
	if err != nil {
		return false, err
	}
	_, rotates := unwrap(s).(Rotator)
	if bias != Absent {
		b, err := BiasAt(s, ZeroWeights(s), 0, 1) // one position tells whether it is per query
		if err != nil {
			return false, err
		}
		if HasBiasRows(s) || b.PerQuery {
			return false, fmt.Errorf("the %s scheme's bias depends on the query's position, not on a distance the %s distance map could give", s.Name(), m.Name())
		}
		if !MapsBias(m) {
			return false, fmt.Errorf("the %s distance map applies to rotary schemes only, not to the %s scheme's bias", m.Name(), s.Name())
		}
	}
	return rotates || bias != Absent || MapMasks(m), nil
}

// As returns s as a T, its window unwrapped, and whether it is one: for code that reads a
// scheme's own weights by what they mean (the scheme_weights measure reads FIRE's and KERPLE's),
// which a window around the scheme must not hide.
func As[T Scheme](s Scheme) (T, bool) {
	t, ok := unwrap(s).(T)
	return t, ok
}
