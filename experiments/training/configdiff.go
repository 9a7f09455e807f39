package training

import (
	"fmt"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
)

// describeDiff names the config fields that differ between two resolved configs.
func describeDiff(a, b []byte) string {
	fa, fb := map[string]string{}, map[string]string{}
	var na, nb yaml.Node
	if yaml.Unmarshal(a, &na) != nil || yaml.Unmarshal(b, &nb) != nil {
		return "the configs differ"
	}
	flatten(&na, "", fa)
	flatten(&nb, "", fb)
	keys := map[string]bool{}
	for k := range fa {
		keys[k] = true
	}
	for k := range fb {
		keys[k] = true
	}
	var diffs []string
	for k := range keys {
		if fa[k] != fb[k] {
			diffs = append(diffs, fmt.Sprintf("%s: %s there, %s here", k, orNone(fa[k]), orNone(fb[k])))
		}
	}
	if len(diffs) == 0 {
		return "the configs differ"
	}
	sort.Strings(diffs)
	// A config written by hand differs in every field it leaves out: a few name the difference.
	if len(diffs) > 5 {
		return fmt.Sprintf("%s; and %d more fields", strings.Join(diffs[:5], "; "), len(diffs)-5)
	}
	return strings.Join(diffs, "; ")
}

func orNone(s string) string {
	if s == "" {
		return "unset"
	}
	return s
}

func flatten(n *yaml.Node, prefix string, out map[string]string) {
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			flatten(c, prefix, out)
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			flatten(n.Content[i+1], prefix+n.Content[i].Value+".", out)
		}
	case yaml.SequenceNode:
		var parts []string
		for _, c := range n.Content {
			parts = append(parts, c.Value)
		}
		out[strings.TrimSuffix(prefix, ".")] = "[" + strings.Join(parts, ",") + "]"
	default:
		out[strings.TrimSuffix(prefix, ".")] = n.Value
	}
}
