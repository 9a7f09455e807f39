package position

import (
	"encoding/json"
	"fmt"
	"reflect"
)

// windowed is a scheme with what its config adds around it: a sliding window (position.window),
// as Mistral's sliding_window and Longformer's local attention do: query i sees the keys j with
// i − Window < j ≤ i, in training and evaluation; and a distance map (position.distance_map),
// which the evaluation scheme carries as it carries a RoPE scaling, so that every measure that
// scores the scheme scores it through the map, and the training scheme (Config.MainPhase) has
// none. The window belongs to the scheme because a mix gives each layer its own (position:
// {layers: [{scheme: rope, window: 32}, nope]}), and the model asks each layer's scheme for it
// (WindowOf). Apart from these it is the scheme it wraps: the adapter's functions unwrap it
// before asking for an optional interface, so that adding either changes no answer about what
// the scheme adds, and no scheme needs a field for them.
type windowed struct {
	// Scheme and Window are exported, as a scheme's settings are, so that a checkpoint records
	// them (experiments/training's schemeJSON). A checkpoint holds a training scheme, which has
	// no distance map.
	Scheme Scheme      `json:"scheme"`
	Window int         `json:"window"`
	Map    DistanceMap `json:"-"`
}

// Name is the wrapped scheme's: a window is not a scheme of its own.
func (w *windowed) Name() string { return w.Scheme.Name() }

// UnmarshalJSON reads a recorded window and scheme onto w, the scheme's fields onto a copy of
// the one w holds, since a Scheme interface cannot be decoded into without a concrete value.
func (w *windowed) UnmarshalJSON(b []byte) error {
	var rec struct {
		Scheme json.RawMessage `json:"scheme"`
		Window int             `json:"window"`
	}
	if err := json.Unmarshal(b, &rec); err != nil {
		return err
	}
	inner := reflect.New(reflect.TypeOf(w.Scheme))
	inner.Elem().Set(reflect.ValueOf(w.Scheme))
	if len(rec.Scheme) > 0 {
		if err := json.Unmarshal(rec.Scheme, inner.Interface()); err != nil {
			return err
		}
	}
	w.Scheme, w.Window = inner.Elem().Interface().(Scheme), rec.Window
	return nil
}

// withWindow wraps s in the window and distance map config gives, or returns s as it is for
// neither.
func withWindow(s Scheme, window int, m DistanceMap) (Scheme, error) {
	switch {
	case window == 0 && m == nil:
		return s, nil
	case window < 0:
		return nil, fmt.Errorf("position.window: %d, want a number of keys of at least 1, or 0 for full attention", window)
	case window > 0 && IsPerLayer(s):
		return nil, fmt.Errorf("position.window: the %s scheme gives each layer a scheme of its own: give the window on its slots (position.layers[i].window)", s.Name())
	}
	return &windowed{Scheme: s, Window: window, Map: m}, nil
}

// DistanceMapOf returns the distance map s is evaluated through, nil for none.
func DistanceMapOf(s Scheme) DistanceMap {
	if w, ok := s.(*windowed); ok {
		return w.Map
	}
	return nil
}

// WindowOf returns the number of keys, its own included, each query of s attends to: query i
// sees the keys j with i − WindowOf(s) < j ≤ i, the others are masked. It is 0 for full
// attention. For a PerLayer scheme ask each layer's (InLayer(s, l).Scheme).
func WindowOf(s Scheme) int {
	if w, ok := s.(*windowed); ok {
		return w.Window
	}
	return 0
}

// Unwrap returns the scheme a window or a distance map wraps, and whether s is so wrapped; s
// itself otherwise. Most code asks the adapter's functions, which unwrap; an export records
// the wrapped scheme's settings with the window beside them.
func Unwrap(s Scheme) (Scheme, bool) {
	w, ok := s.(*windowed)
	if ok {
		return w.Scheme, true
	}
	return s, false
}

// unwrap returns the scheme a window wraps, or s itself: what the adapter asks for optional
// interfaces.
func unwrap(s Scheme) Scheme {
	if w, ok := s.(*windowed); ok {
		return w.Scheme
	}
	return s
}
