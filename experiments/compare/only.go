package compare

import (
	"fmt"
	"path"
	"strings"
)

// Only is the plan of the runs whose labels match one of patterns (path.Match's syntax), in the
// plan's order: a part of a comparison to train and report on its own, as one task's runs of the
// task comparison, which take a quarter of an hour to two where the whole takes the better part
// of a day. Runs left out are not compared, so a run that reuses another's training (a scaling
// applied at evaluation) trains its own weights when that run is left out: the same weights, as
// training is deterministic.
func (p *Plan) Only(patterns []string) (*Plan, error) {
	if len(patterns) == 0 {
		return nil, fmt.Errorf("-runs: no pattern")
	}
	matched := make([]bool, len(patterns))
	var runs []Planned
	for _, r := range p.runs {
		in := false
		for i, pat := range patterns {
			ok, err := path.Match(pat, r.Label)
			if err != nil {
				return nil, fmt.Errorf("-runs: %q: %w", pat, err)
			}
			if ok {
				matched[i], in = true, true
			}
		}
		if in {
			runs = append(runs, r)
		}
	}
	for i, m := range matched {
		if !m {
			return nil, fmt.Errorf("-runs: %q matches no run's label (%s)", patterns[i], p.someLabels(4))
		}
	}
	return &Plan{Comparison: p.Comparison, runs: runs, part: true}, nil
}

// someLabels names the first n distinct labels of the plan, for an error to show what labels
// look like.
func (p *Plan) someLabels(n int) string {
	var out []string
	seen := map[string]bool{}
	for _, r := range p.runs {
		if !seen[r.Label] {
			seen[r.Label] = true
			out = append(out, r.Label)
		}
	}
	if len(out) > n {
		return "labels such as " + strings.Join(out[:n], ", ")
	}
	return "labels: " + strings.Join(out, ", ")
}
