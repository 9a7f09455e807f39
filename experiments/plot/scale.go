package plot

import (
	"cmp"
	"fmt"
	"image/color"
	"math"
	"slices"
	"strconv"

	gonum "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// A Limit is a rule's limit on a deciding ratio: the ratio passes at most Value, or with
// AtLeast at least Value.
type Limit struct {
	Value   float64
	AtLeast bool
}

// Passes says on which side of the limit a ratio passes: "passes ≤ 1.05".
func (l Limit) Passes() string {
	op := "≤"
	if l.AtLeast {
		op = "≥"
	}
	return fmt.Sprintf("passes %s %s", op, strconv.FormatFloat(l.Value, 'g', -1, 64))
}

// Scale lays out a claim's deciding ratio at each grid point against the model's weights and
// against its training tokens, side by side, both x axes logarithmic, with the bars spanning the
// seeds, the rule's limit dashed and labelled, and the side of it that passes shaded. The
// caller saves the figure, deferring Recover.
func Scale(title string, pts []ScalePoint, limit Limit) (Grid, error) {
	byParams, err := scalePanel(pts, limit, "weights (log scale)", func(q ScalePoint) float64 { return q.Params })
	if err != nil {
		return Grid{}, err
	}
	byTokens, err := scalePanel(pts, limit, "training tokens (log scale)", func(q ScalePoint) float64 { return q.Tokens })
	if err != nil {
		return Grid{}, err
	}
	return Grid{Title: title, Plots: []*gonum.Plot{byParams, byTokens}, Cols: 2, Width: 11.5 * vg.Inch, Height: 4.6 * vg.Inch}, nil
}

// A ScalePoint is a claim's deciding ratio at one grid point, with the range of its seeds'
// ratios, and what the ratio is (a ratio at 4x, say); TrainLen is the point's training length.
type ScalePoint struct {
	Name, What               string
	Params, Tokens, TrainLen float64
	Ratio, Low, High         float64
}

// passColor shades the side of a limit that passes.
var passColor = color.NRGBA{0, 158, 115, 38}

// limitColor is a limit's line's and label's.
var limitColor = color.RGBA{213, 94, 0, 255}

// scaleYRange spans the points' bars and the limit, padded, so that the limit and every seed
// are on the axis.
func scaleYRange(pts []ScalePoint, limit float64) (lo, hi float64) {
	lo, hi = limit, limit
	for _, q := range pts {
		lo, hi = math.Min(lo, q.Low), math.Max(hi, q.High)
	}
	pad := 0.08 * math.Max(hi-lo, 0.02*math.Max(math.Abs(limit), 1))
	return lo - pad, hi + pad
}

// scalePanel draws the points against x on a logarithmic axis, each labelled with its grid
// point, bars spanning its seeds, the limit dashed across with its value, and the passing side
// shaded.
func scalePanel(pts []ScalePoint, limit Limit, xLabel string, x func(ScalePoint) float64) (*gonum.Plot, error) {
	p := gonum.New()
	p.X.Label.Text = xLabel
	p.Y.Label.Text = "deciding ratio"
	p.X.Scale = gonum.LogScale{}
	p.X.Tick.Marker = logTicks{}
	p.Y.Tick.Marker = linearTicks{}
	xy := make(plotter.XYs, len(pts))
	errs := make(plotter.YErrors, len(pts))
	labels := make([]string, len(pts))
	minX, maxX := math.Inf(1), math.Inf(-1)
	for i, q := range pts {
		xy[i] = plotter.XY{X: x(q), Y: q.Ratio}
		errs[i] = struct{ Low, High float64 }{q.Ratio - q.Low, q.High - q.Ratio}
		labels[i] = q.Name
		minX, maxX = math.Min(minX, x(q)), math.Max(maxX, x(q))
	}
	p.Y.Min, p.Y.Max = scaleYRange(pts, limit.Value)
	p.X.Min, p.X.Max = minX/1.5, maxX*2
	// The passing side, shaded from the limit to the axis's end.
	edge := p.Y.Min
	if limit.AtLeast {
		edge = p.Y.Max
	}
	shade, err := plotter.NewPolygon(plotter.XYs{{X: p.X.Min, Y: limit.Value}, {X: p.X.Max, Y: limit.Value}, {X: p.X.Max, Y: edge}, {X: p.X.Min, Y: edge}})
	if err != nil {
		return nil, err
	}
	shade.Color, shade.LineStyle.Width = passColor, 0
	p.Add(shade, plotter.NewGrid())
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
	names, err := plotter.NewLabels(plotter.XYLabels{XYs: spreadLabels(xy, 0.06*(p.Y.Max-p.Y.Min)), Labels: labels})
	if err != nil {
		return nil, err
	}
	for i := range names.TextStyle {
		names.TextStyle[i].XAlign, names.TextStyle[i].YAlign, names.Offset.X = draw.XLeft, draw.YCenter, vg.Points(6)
	}
	line, err := plotter.NewLine(plotter.XYs{{X: p.X.Min, Y: limit.Value}, {X: p.X.Max, Y: limit.Value}})
	if err != nil {
		return nil, err
	}
	line.Color, line.Width = limitColor, vg.Points(1.2)
	line.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
	// The limit's label sits at the right end of its line, on the passing side.
	tag, err := plotter.NewLabels(plotter.XYLabels{XYs: plotter.XYs{{X: p.X.Max, Y: limit.Value}},
		Labels: []string{fmt.Sprintf("limit %s: %s", strconv.FormatFloat(limit.Value, 'g', -1, 64), limit.Passes())}})
	if err != nil {
		return nil, err
	}
	tag.TextStyle[0].Color, tag.TextStyle[0].XAlign = limitColor, draw.XRight
	tag.Offset = vg.Point{X: -vg.Points(4), Y: -vg.Points(13)}
	if limit.AtLeast {
		tag.Offset.Y = vg.Points(3)
	}
	p.Add(line, tag, bars, sc, names)
	return p, nil
}

// spreadLabels places the points' labels at their points, moved apart vertically to at least gap
// between two at nearly the same x (within a factor of 1.3), so that none is written over
// another: the grid points of one training length share an x on the tokens axis.
func spreadLabels(xy plotter.XYs, gap float64) plotter.XYs {
	out := slices.Clone(xy)
	order := make([]int, len(xy))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return cmp.Compare(xy[a].Y, xy[b].Y) })
	for k, i := range order {
		for _, j := range order[:k] {
			near := math.Max(xy[i].X, xy[j].X)/math.Min(xy[i].X, xy[j].X) < 1.3
			if near && out[i].Y < out[j].Y+gap {
				out[i].Y = out[j].Y + gap
			}
		}
	}
	return out
}

// linearTicks marks a linear axis every 1, 2 or 5 times a power of ten, four to ten ticks, each
// labelled with the digits its step needs, all with as many: 1.05 is never labelled 1.1.
type linearTicks struct{}

func (linearTicks) Ticks(min, max float64) []gonum.Tick {
	step := tickStep(min, max)
	if step <= 0 {
		return nil
	}
	digits := max0(-int(math.Floor(math.Log10(step) + 1e-9)))
	var t []gonum.Tick
	for k := math.Ceil(min/step - 1e-9); k*step <= max+step*1e-9; k++ {
		// The value is its label's, so that 19 × 0.1 is 1.9, on the axis.
		x := k * step
		if x == 0 {
			x = 0 // not -0, which is labelled "-0"
		}
		label := strconv.FormatFloat(x, 'f', digits, 64)
		v, _ := strconv.ParseFloat(label, 64)
		t = append(t, gonum.Tick{Value: v, Label: label})
		// Unlabelled minor ticks halfway.
		if h := v + step/2; h <= max {
			t = append(t, gonum.Tick{Value: h})
		}
	}
	if first := math.Ceil(min/step-1e-9) * step; first-step/2 >= min {
		t = append(t, gonum.Tick{Value: first - step/2})
	}
	return t
}

// tickStep is the step of 1, 2 or 5 times a power of ten giving four to ten ticks on [min, max].
func tickStep(min, max float64) float64 {
	span := max - min
	if !(span > 0) || math.IsInf(span, 0) {
		return 0
	}
	for _, step := range niceSteps(span / 10) {
		if span/step <= 10 {
			return step
		}
	}
	return 0
}

// niceSteps are 1, 2 and 5 times the powers of ten from the one at or below least, upwards.
func niceSteps(least float64) []float64 {
	e := math.Pow(10, math.Floor(math.Log10(least)))
	var out []float64
	for range 3 {
		out = append(out, e, 2*e, 5*e)
		e *= 10
	}
	return out
}

func max0(n int) int {
	if n < 0 {
		return 0
	}
	return n
}
