package compare

import (
	"fmt"

	"extrapolate/experiments/config"
	"extrapolate/experiments/measure"
	"extrapolate/model"
)

// modelPhrase describes the runs' model: its size when every run's is the same, or the range
// of each dimension and of the weights when a comparison gives some runs a model of their own
// (a task that only a larger model learns), with each run's size in Runs.
func (rep *Report) modelPhrase() string {
	if rep.sameModel() {
		m := rep.Runs[0].Config().Model
		return fmt.Sprintf("a %d-layer, %d-wide, %d-head model (about %d weights)", m.Layers, m.DModel, m.Heads, rep.Runs[0].Result.Params)
	}
	lo, hi := rep.extent(func(r measure.RunResult) int { return r.Result.Params })
	return fmt.Sprintf("a %s-layer, %s-wide, %s-head model (about %d to %d weights; each run's in Runs)",
		rep.rangeOf(func(c config.Config) int { return c.Model.Layers }),
		rep.rangeOf(func(c config.Config) int { return c.Model.DModel }),
		rep.rangeOf(func(c config.Config) int { return c.Model.Heads }), lo, hi)
}

// extent is the least and the greatest of a number over the runs.
func (rep *Report) extent(of func(measure.RunResult) int) (lo, hi int) {
	lo, hi = of(rep.Runs[0]), of(rep.Runs[0])
	for _, r := range rep.Runs {
		lo, hi = min(lo, of(r)), max(hi, of(r))
	}
	return lo, hi
}

// sameModel reports whether every run trains a model of the same size.
func (rep *Report) sameModel() bool {
	m := rep.Runs[0].Config().Model
	for _, r := range rep.Runs {
		if c := r.Config().Model; c.Layers != m.Layers || c.DModel != m.DModel || c.Heads != m.Heads {
			return false
		}
	}
	return true
}

// rangeOf is a dimension of the runs' models: one value, or "lo- to hi", which reads
// "a 2- to 4-layer model".
func (rep *Report) rangeOf(of func(config.Config) int) string {
	lo, hi := rep.extent(func(r measure.RunResult) int { return of(r.Config()) })
	if lo == hi {
		return fmt.Sprint(lo)
	}
	return fmt.Sprintf("%d- to %d", lo, hi)
}

// modelSize is a run's model in the Runs table: layers × width, heads.
func modelSize(m model.Config) string {
	return fmt.Sprintf("%d × %d, %d heads", m.Layers, m.DModel, m.Heads)
}
