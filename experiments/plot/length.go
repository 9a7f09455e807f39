package plot

import (
	"image/color"
	"math"

	gonum "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// A LengthLine is a claim's deciding ratio at grid points that differ only in training length
// (one width at one budget of tokens), each point's TrainLen set, in order of it.
type LengthLine struct {
	Name   string
	Points []ScalePoint
}

// ByLength draws a claim's deciding ratio against the training length, on a logarithmic axis of
// powers of two, a line per LengthLine with bars spanning the seeds, the rule's limit dashed and
// the passing side of it shaded: below the limit, or above it with atLeast. Points are labelled
// with their Name when it is not empty. With nothing to draw it writes no plot.
func ByLength(png, svg, title string, lines []LengthLine, limit float64, atLeast bool) (err error) {
	lo, hi := limit, limit
	minX, maxX := math.Inf(1), math.Inf(-1)
	for _, l := range lines {
		for _, q := range l.Points {
			lo, hi = math.Min(lo, q.Low), math.Max(hi, q.High)
			minX, maxX = math.Min(minX, q.TrainLen), math.Max(maxX, q.TrainLen)
		}
	}
	if math.IsInf(minX, 0) {
		return nil
	}
	defer Recover(png, &err)
	p := gonum.New()
	p.Title.Text = title
	p.X.Label.Text = "training length (tokens, log scale)"
	p.Y.Label.Text = "deciding ratio"
	p.X.Scale = gonum.LogScale{}
	p.X.Tick.Marker = pow2Ticks{}
	p.Add(plotter.NewGrid())
	pad := 0.1 * math.Max(hi-lo, 0.05)
	p.Y.Min, p.Y.Max = lo-pad, hi+pad
	p.X.Min, p.X.Max = minX/1.5, maxX*1.5
	legend := gonum.NewLegend()
	legend.Top, legend.Left = true, true
	if err := markLimit(p, &legend, limit, atLeast); err != nil {
		return err
	}
	for i, l := range lines {
		if err := addLengthLine(p, &legend, l, lengthLineStyle(i)); err != nil {
			return err
		}
	}
	return save(png, svg, p, &legend)
}

// lengthLineStyle is the style of the i-th line of a ByLength figure: a width or a budget of
// tokens, not a scheme, so in none of the scheme table's colours.
func lengthLineStyle(i int) Style {
	return Style{Color: fallbackColors[i%len(fallbackColors)], Shape: fallbackShapes[i%len(fallbackShapes)], Width: seriesWidth}
}

// markLimit shades the passing side of the limit and draws the limit dashed across.
func markLimit(p *gonum.Plot, legend *gonum.Legend, limit float64, atLeast bool) error {
	edge, side := p.Y.Min, "passes: at or below the limit"
	if atLeast {
		edge, side = p.Y.Max, "passes: at or above the limit"
	}
	band, err := plotter.NewPolygon(plotter.XYs{{X: p.X.Min, Y: limit}, {X: p.X.Max, Y: limit}, {X: p.X.Max, Y: edge}, {X: p.X.Min, Y: edge}})
	if err != nil {
		return err
	}
	band.Color = color.NRGBA{44, 160, 44, 40}
	band.LineStyle.Width = 0
	line, err := plotter.NewLine(plotter.XYs{{X: p.X.Min, Y: limit}, {X: p.X.Max, Y: limit}})
	if err != nil {
		return err
	}
	line.Color = color.RGBA{214, 39, 40, 255}
	line.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
	p.Add(band, line)
	legend.Add(side, band)
	legend.Add("the rule's limit", line)
	return nil
}

// addLengthLine draws one line's points joined, in its style, with bars spanning the seeds and
// the points' names beside them.
func addLengthLine(p *gonum.Plot, legend *gonum.Legend, l LengthLine, s Style) error {
	xy := make(plotter.XYs, len(l.Points))
	errs := make(plotter.YErrors, len(l.Points))
	var labels []string
	for i, q := range l.Points {
		xy[i] = plotter.XY{X: q.TrainLen, Y: q.Ratio}
		errs[i] = struct{ Low, High float64 }{q.Ratio - q.Low, q.High - q.Ratio}
		labels = append(labels, q.Name)
	}
	line, points, err := plotter.NewLinePoints(xy)
	if err != nil {
		return err
	}
	s.apply(line, points)
	points.Radius = vg.Points(3.5)
	bars, err := plotter.NewYErrorBars(struct {
		plotter.XYs
		plotter.YErrors
	}{xy, errs})
	if err != nil {
		return err
	}
	bars.Color = s.Color
	names, err := plotter.NewLabels(plotter.XYLabels{XYs: xy, Labels: labels})
	if err != nil {
		return err
	}
	for i := range names.TextStyle {
		names.TextStyle[i].XAlign, names.Offset.X = draw.XLeft, vg.Points(6)
	}
	p.Add(line, bars, points, names)
	legend.Add(l.Name, line, points)
	return nil
}
