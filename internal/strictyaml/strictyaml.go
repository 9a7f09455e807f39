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
// creating sections as needed.
func Set(root *yaml.Node, set string) error {
	key, value, ok := strings.Cut(set, "=")
	if !ok || key == "" {
		return fmt.Errorf("-set %q: want key=value, e.g. train.steps=300", set)
	}
	var v yaml.Node
	if err := yaml.Unmarshal([]byte(value), &v); err != nil {
		return fmt.Errorf("-set %s: %s", key, OneLine(err))
	}
	val := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: ""}
	if len(v.Content) == 1 {
		val = v.Content[0]
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
				node.Content = append(node.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: p}, val)
			}
			return nil
		}
		switch {
		case slot == nil:
			next := &yaml.Node{Kind: yaml.MappingNode}
			node.Content = append(node.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: p}, next)
			node = next
		case (*slot).Kind == yaml.MappingNode:
			node = *slot
		case (*slot).Kind == yaml.ScalarNode && (*slot).Tag == "!!null":
			// "train:" or "train: null" is an empty section: fill it in place, so that the
			// key is not given twice.
			*slot = &yaml.Node{Kind: yaml.MappingNode}
			node = *slot
		default:
			return fmt.Errorf("-set %s: %s is not a section", key, strings.Join(parts[:i+1], "."))
		}
	}
	return nil
}

// where says where a key came from: its line in the file, or -set for a key that an override
// added (the YAML parser gives those line 0).
func where(line int) string {
	if line == 0 {
		return "from -set"
	}
	return fmt.Sprintf("line %d", line)
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
		return fmt.Errorf("%s: want a section of fields (%s)", strings.TrimSuffix(prefix, "."), where(n.Line))
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
			return fmt.Errorf("%s: given twice (%s)", full, where(k.Line))
		}
		seen[k.Value] = true
		ft, ok := fields[k.Value]
		if !ok {
			section := "the config"
			if prefix != "" {
				section = strings.TrimSuffix(prefix, ".")
			}
			return fmt.Errorf("%s: unknown field (%s); %s takes %s", full, where(k.Line), section, strings.Join(names, ", "))
		}
		if err := checkValue(val, ft, full); err != nil {
			return err
		}
	}
	return nil
}

// checkValue checks one value against its field's type: a section recursively, anything else
// by decoding it on its own, so that an error names this field.
func checkValue(val *yaml.Node, ft reflect.Type, full string) error {
	et := ft
	for et.Kind() == reflect.Pointer {
		et = et.Elem()
	}
	_, custom := reflect.New(et).Interface().(yaml.Unmarshaler)
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
	if err := val.Decode(reflect.New(ft).Interface()); err != nil {
		return fmt.Errorf("%s: %s", full, strings.TrimSpace(lineRE.ReplaceAllString(OneLine(err), "")))
	}
	return nil
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
