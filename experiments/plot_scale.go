package experiments

import (
	"fmt"
	"image/color"
	"math"
	"path/filepath"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// writeScaleFigure draws a claim's deciding ratio at each grid point against the model's weights
// and against its training tokens, side by side, both x axes logarithmic, with the bars spanning
// the seeds and the rule's limit dashed.
func (rep *Report) writeScaleFigure(dir, id string) (err error) {
	png := scaleFigure(id, "png")
	defer recoverDrawing(png, &err)
	pts, limit, what := rep.scalePoints(id)
	if len(pts) == 0 {
		return nil
	}
	byParams, err := scalePanel(pts, limit, "weights (log scale)", func(q scalePoint) float64 { return q.params })
	if err != nil {
		return err
	}
	byTokens, err := scalePanel(pts, limit, "training tokens (log scale)", func(q scalePoint) float64 { return q.tokens })
	if err != nil {
		return err
	}
	byParams.Title.Text = fmt.Sprintf("%s: %s (limit %g, dashed)", id, what, limit)
	byTokens.Title.Text = " "
	fig := panels{Plots: []*plot.Plot{byParams, byTokens}, Cols: 2, Width: 11.5 * vg.Inch, Height: 4.5 * vg.Inch}
	return savePanels(filepath.Join(dir, png), filepath.Join(dir, scaleFigure(id, "svg")), fig)
}

// scalePoint is a claim's deciding ratio at one grid point, with the range of its seeds' ratios.
type scalePoint struct {
	name, what       string
	params, tokens   float64
	ratio, low, high float64
}

// scalePoints returns the claim's deciding ratio at each grid point that decided it, the rule's
// limit, and what the ratio is (a ratio at 4x, say).
func (rep *Report) scalePoints(id string) (pts []scalePoint, limit float64, what string) {
	for _, pt := range rep.Points {
		r, ok := pt.claimAt(id)
		if !ok || r.Deciding == nil {
			continue
		}
		d := r.Deciding
		lo, hi := d.Ratio, d.Ratio
		if len(d.SeedRatios) > 0 {
			lo, hi = min(lo, slices.Min(d.SeedRatios)), max(hi, slices.Max(d.SeedRatios))
		}
		pts = append(pts, scalePoint{pt.Name, d.What, float64(pt.Params), float64(pt.TrainTokens), d.Ratio, lo, hi})
		limit, what = d.Limit, d.What
	}
	// The ratio nearest to failing may be another at another point (4x at one, 16x at the
	// next): then each point says which.
	for _, q := range pts {
		if q.what != what {
			for i := range pts {
				pts[i].name += ": " + pts[i].what
			}
			what = "the deciding ratio of each point"
			break
		}
	}
	return pts, limit, what
}

// scalePanel draws the points against x on a logarithmic axis, each labelled with its grid
// point, bars spanning its seeds, and the limit dashed across.
func scalePanel(pts []scalePoint, limit float64, xLabel string, x func(scalePoint) float64) (*plot.Plot, error) {
	p := plot.New()
	p.X.Label.Text = xLabel
	p.Y.Label.Text = "deciding ratio"
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = logTicks{}
	p.Add(plotter.NewGrid())
	xy := make(plotter.XYs, len(pts))
	errs := make(plotter.YErrors, len(pts))
	labels := make([]string, len(pts))
	lo, hi := limit, limit
	minX, maxX := math.Inf(1), math.Inf(-1)
	for i, q := range pts {
		xy[i] = plotter.XY{X: x(q), Y: q.ratio}
		errs[i] = struct{ Low, High float64 }{q.ratio - q.low, q.high - q.ratio}
		labels[i] = q.name
		lo, hi = math.Min(lo, q.low), math.Max(hi, q.high)
		minX, maxX = math.Min(minX, x(q)), math.Max(maxX, x(q))
	}
	sc, err := plotter.NewScatter(xy)
	if err != nil {
		return nil, err
	}
	sc.Color = palette[0]
	sc.Radius = vg.Points(3.5)
	bars, err := plotter.NewYErrorBars(struct {
		plotter.XYs
		plotter.YErrors
	}{xy, errs})
	if err != nil {
		return nil, err
	}
	bars.Color = palette[0]
	names, err := plotter.NewLabels(plotter.XYLabels{XYs: xy, Labels: labels})
	if err != nil {
		return nil, err
	}
	for i := range names.TextStyle {
		names.TextStyle[i].XAlign, names.Offset.X = draw.XLeft, vg.Points(6)
	}
	pad := 0.1 * math.Max(hi-lo, 0.05)
	p.Y.Min, p.Y.Max = lo-pad, hi+pad
	p.X.Min, p.X.Max = minX/1.5, maxX*2
	line, err := plotter.NewLine(plotter.XYs{{X: p.X.Min, Y: limit}, {X: p.X.Max, Y: limit}})
	if err != nil {
		return nil, err
	}
	line.Color = color.RGBA{214, 39, 40, 255}
	line.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
	p.Add(line, bars, sc, names)
	return p, nil
}
