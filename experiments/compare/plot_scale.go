package compare

import (
	"fmt"
	"path/filepath"
	"slices"

	"extrapolate/experiments/claims"
	"extrapolate/experiments/plot"
)

// writeScaleFigure draws a claim's deciding ratio at each grid point against the model's weights
// and against its training tokens, side by side.
func (rep *Report) writeScaleFigure(dir, id string) (err error) {
	png := scaleFigure(id, "png")
	defer plot.Recover(png, &err)
	pts, limit, what := rep.scalePoints(id)
	if len(pts) == 0 {
		return nil
	}
	fig, err := plot.Scale(fmt.Sprintf("%s: %s (limit %g dashed; shaded: %s)", id, what, limit.Value, limit.Passes()), pts, limit)
	if err != nil {
		return err
	}
	return fig.Save(filepath.Join(dir, png), filepath.Join(dir, scaleFigure(id, "svg")))
}

// scalePoints returns the claim's deciding ratio at each grid point that decided it, the rule's
// limit and its passing side, and what the ratio is (a ratio at 4x, say).
func (rep *Report) scalePoints(id string) (pts []plot.ScalePoint, limit plot.Limit, what string) {
	for _, pt := range rep.Points {
		q, d, ok := pt.scalePoint(id)
		if !ok {
			continue
		}
		pts = append(pts, q)
		limit, what = plot.Limit{Value: d.Limit, AtLeast: d.AtLeast}, d.What
	}
	// The ratio nearest to failing may be another at another point (4x at one, 16x at the
	// next): then each point says which.
	for _, q := range pts {
		if q.What != what {
			for i := range pts {
				pts[i].Name += ": " + pts[i].What
			}
			what = "the deciding ratio of each point"
			break
		}
	}
	return pts, limit, what
}

// scalePoint is the claim's deciding ratio at the point, with the range of its seeds', and the
// claim's deciding comparison; false when the point did not decide the claim.
func (pt *PointReport) scalePoint(id string) (plot.ScalePoint, *claims.Deciding, bool) {
	r, ok := pt.claimAt(id)
	if !ok || r.Deciding == nil {
		return plot.ScalePoint{}, nil, false
	}
	d := r.Deciding
	lo, hi := d.Ratio, d.Ratio
	if len(d.SeedRatios) > 0 {
		lo, hi = min(lo, slices.Min(d.SeedRatios)), max(hi, slices.Max(d.SeedRatios))
	}
	return plot.ScalePoint{Name: pt.Name, What: d.What, Params: float64(pt.Params), Tokens: float64(pt.TrainTokens),
		TrainLen: float64(pt.Report.TrainLen), Ratio: d.Ratio, Low: lo, High: hi}, d, true
}
