package compare

import (
	"fmt"
	"regexp"

	"extrapolate/position"
)

// sources lists, once each, how the schemes of the comparison's runs set and train their own
// weights (position.Sourced), those of a mix's layers included, grouped by groupSources.
func (rep *Report) sources() []string {
	var all []string
	add := func(s position.Scheme) {
		if src := position.SourcesOf(s); src != "" {
			all = append(all, src)
		}
	}
	for _, r := range rep.Runs {
		s, _ := r.Resolved.Schemes()
		add(s)
		if position.IsPerLayer(s) {
			for l := 0; l < r.Config().Model.Layers; l++ {
				add(position.InLayer(s, l).Scheme)
			}
		}
	}
	return groupSources(all)
}

var digits = regexp.MustCompile(`[0-9]+`)

// groupSources keeps the first of the lines that differ only in their numbers, saying how
// many settings it stands for: a task comparison trains each task at its own window, and a
// learned table's size or T5's max_distance follows it, so that each scheme would otherwise
// be described once per window, with the same words.
func groupSources(lines []string) []string {
	var (
		order    []string
		first    = map[string]string{}
		variants = map[string]map[string]bool{}
	)
	for _, l := range lines {
		k := digits.ReplaceAllString(l, "#")
		if _, ok := first[k]; !ok {
			order = append(order, k)
			first[k], variants[k] = l, map[string]bool{}
		}
		variants[k][l] = true
	}
	out := make([]string, 0, len(order))
	for _, k := range order {
		l := first[k]
		if n := len(variants[k]); n > 1 {
			l += fmt.Sprintf(" (The numbers are the first run's: %d settings differ only in them, each run's its own.)", n)
		}
		out = append(out, l)
	}
	return out
}
