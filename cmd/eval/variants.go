package main

import (
	"fmt"
	"reflect"
	"strings"

	"extrapolate/experiments/config"
	"extrapolate/experiments/evaluate"
	"extrapolate/position"
)

// variants is what the checkpoint is scored under: the scalings of -scaling (or, by default,
// every one its scheme takes) with factor f, crossed with the distance maps, scalings outer.
// Each variant's scheme is built once, here (evaluate.NewVariant), so that a scaling or map
// the scheme does not take is refused before anything is evaluated, and evaluation uses the
// scheme built.
func (o *options) variants(c config.Config, f position.Factor, maps []*position.DistanceMapConfig) ([]evaluate.Variant, error) {
	names, tried, err := o.scalingNames(c, maps)
	if err != nil {
		return nil, err
	}
	if u := o.fields.Unused(names); u != "" {
		return nil, fmt.Errorf("%s: none of the scalings %s takes it", u, strings.Join(names, ","))
	}
	var out []evaluate.Variant
	for _, name := range names {
		var sc *position.Scaling
		if name != "none" {
			sc = o.fields.Scaling(name, f)
		}
		for _, m := range maps {
			if v, ok := tried[name]; ok && len(maps) == 1 && reflect.DeepEqual(sc, v.Scaling) {
				out = append(out, v) // the default list's trial, at these settings
				continue
			}
			v, err := evaluate.NewVariant(c, sc, m)
			if err != nil {
				return nil, o.blame(c, name, sc, m, err)
			}
			out = append(out, v)
		}
	}
	return out, nil
}

// scalingNames is the scalings -scaling names, or by default none and every registered scaling
// the checkpoint's scheme takes with the config's own map at its defaults: each tried once, the
// variants of those it takes returned by name, so that one at the settings given is not built
// again. At its defaults, so that a bad -factor or field is reported, not left out.
func (o *options) scalingNames(c config.Config, maps []*position.DistanceMapConfig) ([]string, map[string]evaluate.Variant, error) {
	switch {
	case !o.scalingGiven && o.mapGiven:
		return []string{"none"}, nil, nil
	case !o.scalingGiven:
		names, tried := []string{"none"}, map[string]evaluate.Variant{}
		for _, name := range position.ScalingTypes() {
			v, err := evaluate.NewVariant(c, &position.Scaling{Type: name, Factor: position.Factor{Auto: true}}, maps[0])
			if err == nil {
				names, tried[name] = append(names, name), v
			}
		}
		return names, tried, nil
	case strings.TrimSpace(o.scalings) == "":
		return nil, nil, fmt.Errorf("-scaling: empty value; give scalings (none,%s), or leave -scaling out for every one the checkpoint's scheme takes", strings.Join(position.ScalingTypes(), ","))
	}
	names := strings.Split(o.scalings, ",")
	for i := range names {
		if names[i] = strings.TrimSpace(names[i]); names[i] == "" {
			return nil, nil, fmt.Errorf("-scaling %s: an empty name in the list", o.scalings)
		}
	}
	return names, nil, nil
}

// blame names the flag behind err, the error of the variant of scaling sc (name) and map m:
// -scaling, unless -map gave m and the scaling alone is taken (tried again only now, on the way
// out); the checkpoint's own map is no flag's.
func (o *options) blame(c config.Config, name string, sc *position.Scaling, m *position.DistanceMapConfig, err error) error {
	if m == nil || !o.mapGiven {
		return fmt.Errorf("-scaling %s: %v", name, err)
	}
	if sc != nil {
		if _, alone := evaluate.NewVariant(c, sc, nil); alone != nil {
			return fmt.Errorf("-scaling %s: %v", name, alone)
		}
	}
	return fmt.Errorf("-map %s: %v", m.Type, err)
}
