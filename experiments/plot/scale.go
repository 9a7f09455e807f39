package plot

import (
	"image/color"
	"math"

	gonum "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Scale lays out a claim's deciding ratio at each grid point against the model's weights and
// against its training tokens, side by side, both x axes logarithmic, with the bars spanning the
// seeds and the rule's limit dashed. The caller saves the figure, deferring Recover.
func Scale(title string, pts []ScalePoint, limit float64) (Grid, error) {
	byParams, err := scalePanel(pts, limit, "weights (log scale)", func(q ScalePoint) float64 { return q.Params })
	if err != nil {
		return Grid{}, err
	}
	byTokens, err := scalePanel(pts, limit, "training tokens (log scale)", func(q ScalePoint) float64 { return q.Tokens })
	if err != nil {
		return Grid{}, err
	}
	byParams.Title.Text = title
	byTokens.Title.Text = " "
	return Grid{Plots: []*gonum.Plot{byParams, byTokens}, Cols: 2, Width: 11.5 * vg.Inch, Height: 4.5 * vg.Inch}, nil
}

// A ScalePoint is a claim's deciding ratio at one grid point, with the range of its seeds'
// ratios, and what the ratio is (a ratio at 4x, say); TrainLen is the point's training length.
type ScalePoint struct {
	Name, What               string
	Params, Tokens, TrainLen float64
	Ratio, Low, High         float64
}

// scalePanel draws the points against x on a logarithmic axis, each labelled with its grid
// point, bars spanning its seeds, and the limit dashed across.
func scalePanel(pts []ScalePoint, limit float64, xLabel string, x func(ScalePoint) float64) (*gonum.Plot, error) {
	p := gonum.New()
	p.X.Label.Text = xLabel
	p.Y.Label.Text = "deciding ratio"
	p.X.Scale = gonum.LogScale{}
	p.X.Tick.Marker = logTicks{}
	p.Add(plotter.NewGrid())
	xy := make(plotter.XYs, len(pts))
	errs := make(plotter.YErrors, len(pts))
	labels := make([]string, len(pts))
	lo, hi := limit, limit
	minX, maxX := math.Inf(1), math.Inf(-1)
	for i, q := range pts {
		xy[i] = plotter.XY{X: x(q), Y: q.Ratio}
		errs[i] = struct{ Low, High float64 }{q.Ratio - q.Low, q.High - q.Ratio}
		labels[i] = q.Name
		lo, hi = math.Min(lo, q.Low), math.Max(hi, q.High)
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
