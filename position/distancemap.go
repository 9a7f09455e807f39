package position

import (
	"fmt"
	"strings"
)

// Span is a run of keys [From, To) that a query attends to: scored at the true positions, or,
// when Alt, at the distance map's alternate positions (AltQuery(i) for the query, AltKey(j) for key j).
type Span struct {
	From, To int
	Alt      bool
}

// A DistanceMap changes, at evaluation only, which keys each query sees and at what distance.
// The methods that extend a model past its training length without training it (ReRoPE,
// Self-Extend, LM-Infinite, StreamingLLM, STRING, Dual Chunk Attention) are each one: a mask,
// and for the keys kept, either their true distance or one the map gives. A new map is one
// file, in this package or any other, that registers a constructor in its init function:
//
//	func init() { position.RegisterDistanceMap("mine", newMine) }
//
// and a config names it as position.distance_map.type. Whether a map fits a scheme is asked
// through MapAppliesTo (adapter.go).
type DistanceMap interface {
	Name() string
	// Spans appends to dst the spans of the keys query i (0-based) attends to: disjoint, in increasing
	// order, all keys ≤ i, and always including key i itself, not Alt. Keys in no span are masked.
	Spans(i int, dst []Span) []Span
	// AltQuery and AltKey are the positions at which query i and key j of an Alt span are rotated
	// (RoPE), so that their distance is AltQuery(i) − AltKey(j). May be fractional (leaky ReRoPE).
	AltQuery(i int) float64
	AltKey(j int) float64
}

// BiasMapper is a DistanceMap whose paper applies it to additive-bias schemes (ALiBi) too, not to
// rotary ones only: the bias of an Alt pair is then taken at the integer distance
// AltQuery(i) − AltKey(j), which such a map keeps whole. A map without it is for rotary schemes
// only.
type BiasMapper interface {
	DistanceMap
	MapsBias() bool
}

// Masker is a DistanceMap that masks keys (a Λ-shaped or windowed attention), which changes
// what a query sees even in a model without positions; a map without it only changes distances.
type Masker interface {
	DistanceMap
	Masks() bool
}

// DistanceMapSpec is what a distance map is built from: the training length, which its
// defaults are relative to, and its section of the config.
type DistanceMapSpec struct {
	TrainLen int
	Config   DistanceMapConfig
}

// DistanceMapFactory builds a distance map, or says which config field is wrong.
type DistanceMapFactory func(DistanceMapSpec) (DistanceMap, error)

var distanceMaps = registry[DistanceMapFactory]{kind: "distance map"}

// RegisterDistanceMap makes a distance map available by name. It panics if the name is taken,
// as Register does.
func RegisterDistanceMap(name string, f DistanceMapFactory) { distanceMaps.add(name, f) }

// DistanceMapTypes lists the registered distance maps, sorted.
func DistanceMapTypes() []string { return distanceMaps.names() }

// NewDistanceMap builds the distance map c names for a model trained at trainLen positions, or
// none, a nil DistanceMap, for a nil c.
func NewDistanceMap(c *DistanceMapConfig, trainLen int) (DistanceMap, error) {
	if c == nil {
		return nil, nil
	}
	f, ok := distanceMaps.lookup(c.Type)
	if !ok {
		return nil, fmt.Errorf("position.distance_map.type: unknown type %q (known: %s)", c.Type, strings.Join(DistanceMapTypes(), ", "))
	}
	if trainLen <= 0 {
		return nil, fmt.Errorf("position.distance_map: training length %d", trainLen)
	}
	return f(DistanceMapSpec{TrainLen: trainLen, Config: *c})
}

// appendSpan appends [from, to) to dst, dropping it when empty and joining it to the last span
// when they touch and are of one kind, so that every map gives its spans in one form.
func appendSpan(dst []Span, from, to int, alt bool) []Span {
	if from >= to {
		return dst
	}
	if n := len(dst); n > 0 && dst[n-1].To == from && dst[n-1].Alt == alt {
		dst[n-1].To = to
		return dst
	}
	return append(dst, Span{From: from, To: to, Alt: alt})
}

// appendSplit appends the keys [from, to), those before b Alt and the rest not.
func appendSplit(dst []Span, from, to, b int) []Span {
	b = max(from, min(to, b))
	dst = appendSpan(dst, from, b, true)
	return appendSpan(dst, b, to, false)
}

// nearExact is the spans of the maps that keep the true distance below w and give every
// farther key an alternate one: keys j ≤ i − w Alt, the w − 1 before i and i itself exact.
func nearExact(i, w int, dst []Span) []Span {
	return appendSplit(dst, 0, i+1, i-w+1)
}

// atLeast refuses a value of a field below least.
func atLeast(field string, v, least int) error {
	if v < least {
		return fmt.Errorf("position.distance_map.%s: %d, want at least %d", field, v, least)
	}
	return nil
}
