package compare

import "slices"

// lengthsVary reports whether the grid's points train at different lengths.
func (rep *Report) lengthsVary() bool { return len(rep.trainLens()) > 1 }

// trainLens are the training lengths of the grid's points, ascending, once each.
func (rep *Report) trainLens() []int {
	var out []int
	for _, pt := range rep.Points {
		out = append(out, pt.Report.TrainLen)
	}
	slices.Sort(out)
	return slices.Compact(out)
}
