// Package strictyaml reads YAML configs strictly: one document, a mapping at the top, every key
// a field of the struct it decodes into, no key twice, every value of its field's type, and
// every error one line naming the field by its dotted path. It also applies -set overrides
// (key=value, key a dotted path) to a document before it is decoded.
package strictyaml

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"regexp"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"

	"extrapolate/internal/inputfile"
)

// Read reads a config file of at most max bytes into its top-level mapping.
func Read(path string, max int64) (*yaml.Node, error) {
	b, err := inputfile.ReadFile(path, max)
	if errors.Is(err, inputfile.ErrTooLarge) {
		return nil, fmt.Errorf("%s: larger than %d bytes, too large for a config", path, max)
	}
	if err != nil {
		return nil, err
	}
	return Parse(path, b)
}

// Parse reads one YAML document whose top level is a mapping, and returns the mapping.
func Parse(path string, b []byte) (*yaml.Node, error) {
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%s: empty config", path)
		}
		return nil, fmt.Errorf("%s: %s", path, OneLine(err))
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s: more than one YAML document", path)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s: a config is a mapping of sections (name, model, train, ...)", path)
	}
	return doc.Content[0], nil
}

// Set sets key=value in a YAML mapping, key a dotted path such as train.steps and value YAML,
// creating sections as needed. The nodes it adds say where they came from (Where), so that an
// error in them names the -set rather than a line of the file.
func Set(root *yaml.Node, set string) error {
	key, value, ok := strings.Cut(set, "=")
	if !ok || key == "" {
		return fmt.Errorf("-set %q: want key=value, e.g. train.steps=300", set)
	}
	if strings.TrimSpace(value) == "" {
		// Most likely an unset shell variable: YAML reads it as null, which would leave the
		// field at its default, not what was meant.
		return fmt.Errorf("-set %s: empty value; give one (null for none)", key)
	}
	var v yaml.Node
	if err := yaml.Unmarshal([]byte(value), &v); err != nil {
		return fmt.Errorf("-set %s: %s", key, OneLine(err))
	}
	val := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: ""}
	if len(v.Content) == 1 {
		val = v.Content[0]
	}
	origin := setMark + key + "=" + value
	mark(val, origin, false)
	if err := put(root, key, val, origin, 0); err != nil {
		return fmt.Errorf("-set %s: %w", key, err)
	}
	return nil
}

// SetFrom sets key, a dotted path, to a copy of value, a node read from a file at the given
// line, as Set does: a setting a comparison's file gives its runs. The nodes it adds say where
// they came from, origin (as "grid[0].set of scale.yaml"), and keep their lines in that file, so
// that an error in them names the setting and its line, not a -set or a line of the run's file.
func SetFrom(root *yaml.Node, key string, value *yaml.Node, line int, origin string) error {
	val := copyNode(value)
	mark(val, fileMark+origin, true)
	if err := put(root, key, val, fileMark+origin, line); err != nil {
		return fmt.Errorf("%s: %s: %w (line %d)", origin, key, err, line)
	}
	return nil
}

// put sets key, a dotted path, to val in a YAML mapping, creating sections as needed; the nodes
// it adds carry origin, at line.
func put(root *yaml.Node, key string, val *yaml.Node, origin string, line int) error {
	added := func(n *yaml.Node) *yaml.Node {
		n.LineComment, n.Line = origin, line
		return n
	}
	node := root
	parts := strings.Split(key, ".")
	for i, p := range parts {
		// The value under p in this section, if the section has p.
		var slot **yaml.Node
		for j := 0; j+1 < len(node.Content); j += 2 {
			if node.Content[j].Value == p {
				slot = &node.Content[j+1]
			}
		}
		if i == len(parts)-1 {
			if slot != nil {
				*slot = val
			} else {
				node.Content = append(node.Content, added(&yaml.Node{Kind: yaml.ScalarNode, Value: p}), val)
			}
			return nil
		}
		switch {
		case slot == nil:
			next := added(&yaml.Node{Kind: yaml.MappingNode})
			node.Content = append(node.Content, added(&yaml.Node{Kind: yaml.ScalarNode, Value: p}), next)
			node = next
		case (*slot).Kind == yaml.MappingNode:
			node = *slot
		case (*slot).Kind == yaml.ScalarNode && (*slot).Tag == "!!null":
			// "train:" or "train: null" is an empty section: fill it in place, so that the
			// key is not given twice.
			*slot = added(&yaml.Node{Kind: yaml.MappingNode})
			node = *slot
		default:
			return fmt.Errorf("%s is not a section", strings.Join(parts[:i+1], "."))
		}
	}
	return nil
}

// copyNode copies a node and every node under it, so that marking the copy leaves the
// original, which a comparison applies to each of its runs, as it was.
func copyNode(n *yaml.Node) *yaml.Node {
	c := *n
	if n.Alias != nil {
		c.Alias = copyNode(n.Alias)
	}
	c.Content = make([]*yaml.Node, len(n.Content))
	for i, x := range n.Content {
		c.Content[i] = copyNode(x)
	}
	return &c
}

// setMark starts the origin that Set writes into the LineComment of every node it adds, and
// fileMark that of SetFrom. The parser keeps a comment with its '#', so no comment read from a
// file starts so; and a config is never written back from its nodes, so the mark goes nowhere.
const (
	setMark  = "-set "
	fileMark = "@"
)

// mark marks n and every node under it as coming from origin. A -set's lines count from the
// start of its value (line 1), not of the file, so they are dropped and Where reports the origin
// instead; a file's are kept.
func mark(n *yaml.Node, origin string, keepLines bool) {
	n.LineComment = origin
	if !keepLines {
		n.Line, n.Column = 0, 0
	}
	for _, c := range n.Content {
		mark(c, origin, keepLines)
	}
}

// Where says where a node came from, for an error message: "line 4" of the file, "from -set
// key=value" for a node that Set added, or "from grid[0].set of scale.yaml, line 7" for one
// that SetFrom added.
func Where(n *yaml.Node) string {
	switch {
	case strings.HasPrefix(n.LineComment, setMark):
		return "from " + n.LineComment
	case strings.HasPrefix(n.LineComment, fileMark):
		return fmt.Sprintf("from %s, line %d", strings.TrimPrefix(n.LineComment, fileMark), n.Line)
	case n.Line == 0:
		return "not from the file" // made by a program, not read
	}
	return fmt.Sprintf("line %d", n.Line)
}

// Decode decodes a YAML mapping into v, which holds the defaults. An unknown key, a
// duplicate key or a value of the wrong type is an error naming the field by its dotted path.
func Decode(path string, root *yaml.Node, v any) error {
	if err := checkKeys(root, reflect.TypeOf(v).Elem(), ""); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := root.Decode(v); err != nil {
		return fmt.Errorf("%s: %s", path, OneLine(err))
	}
	return nil
}

var lineRE = regexp.MustCompile(`line \d+: `)

// checkKeys walks a mapping against a struct type: every key must be a field's yaml name, no key
// may appear twice, and every value must decode into its field's type.
func checkKeys(n *yaml.Node, t reflect.Type, prefix string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("%s: want a section of fields (%s)", strings.TrimSuffix(prefix, "."), Where(n))
	}
	fields := map[string]reflect.Type{}
	var names []string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if tag == "" || tag == "-" {
			continue
		}
		fields[tag] = f.Type
		names = append(names, tag)
	}
	sort.Strings(names)
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		full := prefix + k.Value
		if seen[k.Value] {
			return fmt.Errorf("%s: given twice (%s)", full, Where(k))
		}
		seen[k.Value] = true
		ft, ok := fields[k.Value]
		if !ok {
			section := "the config"
			if prefix != "" {
				section = strings.TrimSuffix(prefix, ".")
			}
			return fmt.Errorf("%s: unknown field (%s); %s takes %s", full, Where(k), section, strings.Join(names, ", "))
		}
		if err := checkValue(val, ft, full); err != nil {
			return err
		}
	}
	return nil
}

// checkValue checks one value against its field's type: a section recursively, anything else
// by decoding it on its own, so that an error names this field and where it was given.
func checkValue(val *yaml.Node, ft reflect.Type, full string) error {
	et := ft
	for et.Kind() == reflect.Pointer {
		et = et.Elem()
	}
	custom := unmarshaler(et)
	null := val.Kind == yaml.ScalarNode && val.Tag == "!!null"
	if et.Kind() == reflect.Struct && !custom && !null {
		return checkKeys(val, et, full+".")
	}
	if et.Kind() == reflect.Slice && et.Elem().Kind() == reflect.Struct && val.Kind == yaml.SequenceNode {
		for i, item := range val.Content {
			if err := checkKeys(item, et.Elem(), fmt.Sprintf("%s[%d].", full, i)); err != nil {
				return err
			}
		}
		return nil
	}
	if err := DecodeNode(val, reflect.New(ft).Interface()); err != nil {
		if custom && strings.HasPrefix(err.Error(), full) {
			return err // the type's own decoder named the field, and where
		}
		return fmt.Errorf("%s: %v (%s)", full, err, Where(val))
	}
	return nil
}

// unmarshaler reports whether t decodes itself.
func unmarshaler(t reflect.Type) bool {
	_, ok := reflect.New(t).Interface().(yaml.Unmarshaler)
	return ok
}

var nodeType = reflect.TypeOf(yaml.Node{})

// DecodeNode decodes n into the value v points to, as n.Decode does, except that a whole-number
// field takes only an integer: yaml.v3 fills an int from 3.5 with 3, and from 20.0 or 1e3 as
// well, without a word. Its error is one line, without the line numbers of the YAML parser,
// which count from the start of n's document.
func DecodeNode(n *yaml.Node, v any) error {
	if err := integersOnly(n, reflect.TypeOf(v)); err != nil {
		return err
	}
	if err := n.Decode(v); err != nil {
		return errors.New(strings.TrimSpace(lineRE.ReplaceAllString(OneLine(err), "")))
	}
	return nil
}

// integersOnly walks n against the type it will be decoded into, and refuses a number that is
// not an integer where the type wants a whole number. A type that decodes itself applies its
// own rules; anything else that does not fit is left to the decoder's error.
func integersOnly(n *yaml.Node, t reflect.Type) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	if t == nodeType || unmarshaler(t) {
		return nil
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!float" {
			return fmt.Errorf("%s, want a whole number", n.Value)
		}
	case reflect.Slice, reflect.Array:
		if n.Kind == yaml.SequenceNode {
			for _, c := range n.Content {
				if err := integersOnly(c, t.Elem()); err != nil {
					return err
				}
			}
		}
	case reflect.Map:
		if n.Kind == yaml.MappingNode {
			for i := 1; i < len(n.Content); i += 2 {
				if err := integersOnly(n.Content[i], t.Elem()); err != nil {
					return err
				}
			}
		}
	case reflect.Struct:
		if n.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(n.Content); i += 2 {
				if f, ok := fieldByTag(t, n.Content[i].Value); ok {
					if err := integersOnly(n.Content[i+1], f.Type); err != nil {
						return err
					}
				}
			}
		}
	}
	return nil
}

// fieldByTag finds the field of struct type t whose yaml name is name.
func fieldByTag(t reflect.Type, name string) (reflect.StructField, bool) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if tag, _, _ := strings.Cut(f.Tag.Get("yaml"), ","); tag == name {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

// OneLine is a YAML error on one line: the first problem, and how many more.
func OneLine(err error) string {
	var te *yaml.TypeError
	if errors.As(err, &te) && len(te.Errors) > 1 {
		// One line: the first problem, and how many more.
		return fmt.Sprintf("%s (and %d more)", strings.Join(strings.Fields(te.Errors[0]), " "), len(te.Errors)-1)
	}
	s := strings.TrimPrefix(err.Error(), "yaml: ")
	s = strings.TrimPrefix(s, "unmarshal errors:")
	s = strings.Join(strings.Fields(s), " ")
	return s
}
