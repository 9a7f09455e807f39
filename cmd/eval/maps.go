package main

import (
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"

	"extrapolate/position"
)

// parseMaps reads -map: a comma-separated list of distance maps, each none or a type with its
// fields after colons, rerope:window=16 or self_extend:group=4:window=16. The fields are
// decoded as YAML scalars; each map's factory checks them and names a bad one.
func parseMaps(list string) ([]*position.DistanceMapConfig, error) {
	if strings.TrimSpace(list) == "" {
		return nil, fmt.Errorf("-map: empty value; give maps (none,%s), or leave -map out", strings.Join(position.DistanceMapTypes(), ","))
	}
	var out []*position.DistanceMapConfig
	for _, item := range strings.Split(list, ",") {
		parts := strings.Split(strings.TrimSpace(item), ":")
		typ := strings.TrimSpace(parts[0])
		if typ == "" {
			return nil, fmt.Errorf("-map %s: an empty name in the list", list)
		}
		if typ == "none" {
			if len(parts) > 1 {
				return nil, fmt.Errorf("-map %s: none takes no fields", item)
			}
			out = append(out, nil)
			continue
		}
		c := &position.DistanceMapConfig{Type: typ}
		for _, f := range parts[1:] {
			k, v, ok := strings.Cut(f, "=")
			if k = strings.TrimSpace(k); !ok || k == "" {
				return nil, fmt.Errorf("-map %s: field %q, want name=value", item, f)
			}
			if _, dup := c.Params[k]; dup {
				return nil, fmt.Errorf("-map %s: field %s given twice", item, k)
			}
			var x any
			if err := yaml.Unmarshal([]byte(v), &x); err != nil || x == nil {
				x = v // the map's own check names the field if a string will not do
			}
			if c.Params == nil {
				c.Params = map[string]any{}
			}
			c.Params[k] = x
		}
		out = append(out, c)
	}
	return out, nil
}
