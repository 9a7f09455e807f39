package measure

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
)

// SetMeasurement keeps v, as JSON, in the run's results file under the measure's name.
func (r *Result) SetMeasurement(name string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("measure %s: %w", name, err)
	}
	if r.Measured == nil {
		r.Measured = map[string]json.RawMessage{}
	}
	r.Measured[name] = b
	return nil
}

// Measurement reads into v what the results file keeps under the measure's name; false when it
// keeps nothing there.
func (r *Result) Measurement(name string, v any) (bool, error) {
	b, ok := r.Measured[name]
	if !ok {
		return false, nil
	}
	if err := json.Unmarshal(b, v); err != nil {
		return true, fmt.Errorf("%s of run %s: %w", name, r.Name, err)
	}
	return true, nil
}

// resultFields is Result without its methods, for the encoding of its own fields.
type resultFields Result

// MarshalJSON writes Result's fields, then the measurements: those of registered measures in
// the order they registered, then any others (of a measure this program lacks) by name.
func (r Result) MarshalJSON() ([]byte, error) {
	b, err := json.Marshal((*resultFields)(&r))
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	buf.Write(b[:len(b)-1]) // without the closing brace
	for _, name := range measuredOrder(r.Measured) {
		key, _ := json.Marshal(name)
		fmt.Fprintf(&buf, ",%s:%s", key, r.Measured[name])
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// measuredOrder lists the measurements' names in the order the file keeps them.
func measuredOrder(m map[string]json.RawMessage) []string {
	var names, others []string
	for _, name := range Names() {
		if _, ok := m[name]; ok {
			names = append(names, name)
		}
	}
	for name := range m {
		if !slices.Contains(names, name) {
			others = append(others, name)
		}
	}
	slices.Sort(others)
	return append(names, others...)
}

// UnmarshalJSON reads Result's fields, and keeps every other field as a measurement.
func (r *Result) UnmarshalJSON(b []byte) error {
	if err := json.Unmarshal(b, (*resultFields)(r)); err != nil {
		return err
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(b, &all); err != nil {
		return err
	}
	own := ownFields()
	for k, v := range all {
		if own[k] {
			continue
		}
		if r.Measured == nil {
			r.Measured = map[string]json.RawMessage{}
		}
		r.Measured[k] = v
	}
	return nil
}

// ownFields are the JSON names of Result's own fields.
func ownFields() map[string]bool {
	own := map[string]bool{}
	t := reflect.TypeFor[Result]()
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			own[name] = true
		}
	}
	return own
}
