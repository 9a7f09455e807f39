package plot

import (
	"image/color"
	"math"
	"slices"

	gonum "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// Line is one series' line in a comparison's figure: its points, x on a log axis.
type Line struct {
	Label string
	XYs   plotter.XYs
	// Low and High are the error bars below and above each point; nil for none.
	Low, High []float64
}

// ByFamily is a comparison figure with a panel per family of position schemes, each series in its
// style, the reference series in each panel, the training length marked, x on a log axis. Every
// panel shares one y range, which spans every series and the reference, so that a level reads the
// same in every panel: a family's few percent look as small as they are beside another family's
// factor of ten, and the report's tables give them exactly. Within a panel the series are moved
// apart a little in x (dodgeStep), so that lines and error bars that coincide stay visible.
type ByFamily struct {
	Title, XLabel, YLabel string
	LogY                  bool
	TrainLen              int
	// Lines and Styles are by series of the comparison, Families the indices of each family's
	// lines, and Reference the index of the line every panel draws, or -1.
	Lines     []Line
	Styles    []Style
	Families  [NumFamilies][]int
	Reference int
	// Guide, when it has points, is a line every panel draws thin and dotted beneath the
	// series, such as the entropy of uniform attention.
	Guide Line
}

// guideStyle is a figure's guide line's.
var guideStyle = Style{Color: color.Gray{Y: 110}, Width: vg.Points(1), Dashes: []vg.Length{vg.Points(1), vg.Points(2)}}

// Save draws a panel per family with a line to draw, all on the same x and y axes, each axis
// titled; with no line to draw it writes nothing.
func (f ByFamily) Save(png, svg string) (err error) {
	defer Recover(png, &err)
	fig, ok, err := f.grid()
	if !ok || err != nil {
		return err
	}
	return fig.Save(png, svg)
}

// grid lays the figure out, false when there is no line to draw.
func (f ByFamily) grid() (Grid, bool, error) {
	var members [][]int
	var titles []string
	for fam, idx := range f.Families {
		var drawn []int
		for _, i := range idx {
			if len(f.Lines[i].XYs) > 0 {
				drawn = append(drawn, i)
			}
		}
		if len(drawn) > 0 {
			members, titles = append(members, drawn), append(titles, Family(fam).Title())
		}
	}
	if len(members) == 0 {
		return Grid{}, false, nil
	}
	xr, yr := f.xRange(), f.yRange(slices.Concat(members...))
	cols := min(2, len(members))
	fig := Grid{Title: f.Title, XLabel: f.XLabel, Cols: cols}
	for k, idx := range members {
		p, legend, err := f.panel(titles[k], idx, xr, yr)
		if err != nil {
			return Grid{}, false, err
		}
		// Every panel titles its y axis: a reader comparing two panels side by side need
		// not look back to the first column for the unit.
		p.Y.Label.Text = f.YLabel
		fig.Plots, fig.Legends = append(fig.Plots, p), append(fig.Legends, legend)
	}
	fig.FitLegends(1.9 * vg.Inch)
	rows := (len(members) + cols - 1) / cols
	// One panel is drawn wider, for the title to fit; a row is tall enough for its tallest
	// legend (a task comparison has a series per scheme and task), so that no legend runs
	// into the next row or off the image.
	fig.Width = max(vg.Length(cols)*(4.8*vg.Inch+fig.LegendWidth)+0.5*vg.Inch, 11.5*vg.Inch)
	rowHeight := 3.9 * vg.Inch
	for _, l := range fig.Legends {
		rowHeight = max(rowHeight, legendHeight(l)+0.6*vg.Inch)
	}
	fig.Height = vg.Length(rows)*rowHeight + 0.9*vg.Inch
	return fig, true, nil
}

// axisRange is the extent of an axis, shared by every panel.
type axisRange struct{ Min, Max float64 }

// xRange spans every line's points, and the training length, shared by every panel.
func (f ByFamily) xRange() axisRange {
	x := axisRange{float64(f.TrainLen), float64(f.TrainLen)}
	for _, l := range slices.Concat(f.Lines, []Line{f.Guide}) {
		for _, xy := range l.XYs {
			x = axisRange{math.Min(x.Min, xy.X), math.Max(x.Max, xy.X)}
		}
	}
	return axisRange{x.Min / 1.2, x.Max * 1.2}
}

// yRange spans the points and error bars of the lines idx and of the reference, every panel's;
// on a log y axis a bar stops above 0.
func (f ByFamily) yRange(idx []int) axisRange {
	if f.Reference >= 0 {
		idx = append(slices.Clone(idx), f.Reference)
	}
	y := axisRange{math.Inf(1), math.Inf(-1)}
	for _, i := range idx {
		l := f.Lines[i]
		for j, xy := range l.XYs {
			lo, hi := xy.Y, xy.Y
			if l.Low != nil {
				lo, hi = lo-l.Low[j], hi+l.High[j]
			}
			y = axisRange{math.Min(y.Min, lo), math.Max(y.Max, hi)}
		}
	}
	if f.LogY {
		lo := math.Max(y.Min, 1e-3)
		// At least a factor of 1.2, so that a flat line is not all the panel's height.
		if r := y.Max / lo; r < 1.2 {
			lo, y.Max = lo/math.Sqrt(1.2/r), y.Max*math.Sqrt(1.2/r)
		}
		return axisRange{lo * 0.95, y.Max * 1.05}
	}
	pad := math.Max((y.Max-y.Min)*0.05, 1e-3)
	return axisRange{y.Min - pad, y.Max + pad}
}

// panel draws the lines idx of one family over the reference's, which comes first also when it is
// one of them, and the training length, each line but the reference moved a little in x (dodge).
func (f ByFamily) panel(title string, idx []int, xr, yr axisRange) (*gonum.Plot, *gonum.Legend, error) {
	p := gonum.New()
	p.Title.Text = title
	p.X.Scale, p.X.Tick.Marker = gonum.LogScale{}, pow2Ticks{}
	p.Y.Tick.Marker = linearTicks{}
	if f.LogY {
		p.Y.Scale, p.Y.Tick.Marker = gonum.LogScale{}, logTicks{}
	}
	p.Add(plotter.NewGrid())
	legend := gonum.NewLegend()
	legend.Top, legend.Left = true, true
	legend.TextStyle.Font.Size = vg.Points(10)
	if len(f.Guide.XYs) > 0 {
		if err := addLine(p, &legend, f.Guide, guideStyle, ""); err != nil {
			return nil, nil, err
		}
	}
	var others []int
	for _, i := range idx {
		if i != f.Reference {
			others = append(others, i)
		}
	}
	if r := f.Reference; r >= 0 && len(f.Lines[r].XYs) > 0 {
		if err := addLine(p, &legend, f.Lines[r], f.Styles[r], " (reference)"); err != nil {
			return nil, nil, err
		}
	}
	for k, i := range others {
		if err := addLine(p, &legend, dodge(f.Lines[i], k, len(others)), f.Styles[i], ""); err != nil {
			return nil, nil, err
		}
	}
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = xr.Min, xr.Max, yr.Min, yr.Max
	if err := markTrainLen(p, &legend, f.TrainLen); err != nil {
		return nil, nil, err
	}
	return p, &legend, nil
}

// maxDodge is how far, in octaves, the outermost lines of a panel are moved either way: with
// many lines the step shrinks, so that no point strays towards the next length.
const maxDodge = 0.15

// dodge is the k-th of n lines of a panel moved by (k − (n−1)/2) steps in x, a step dodgeStep
// octaves, or less when the n lines would spread beyond ±maxDodge.
func dodge(l Line, k, n int) Line {
	step := dodgeStep
	if n > 1 {
		step = min(step, 2*maxDodge/float64(n-1))
	}
	l.XYs = slices.Clone(l.XYs)
	for j := range l.XYs {
		l.XYs[j].X *= math.Exp2(step * (float64(k) - float64(n-1)/2))
	}
	return l
}

// addLine draws a line in its style, with its error bars when they show a spread, and adds it
// to the legend, if not nil, with the suffix after its label.
func addLine(p *gonum.Plot, legend *gonum.Legend, l Line, s Style, suffix string) error {
	ln, err := plotter.NewLine(l.XYs)
	if err != nil {
		return err
	}
	var pts *plotter.Scatter
	if s.Shape != nil {
		if pts, err = plotter.NewScatter(l.XYs); err != nil {
			return err
		}
	}
	s.apply(ln, pts)
	p.Add(ln)
	things := []gonum.Thumbnailer{ln}
	if pts != nil {
		p.Add(pts)
		things = append(things, pts)
	}
	if legend != nil {
		legend.Add(l.Label+suffix, things...)
	}
	if l.Low == nil || !hasSpread(l.High) {
		return nil
	}
	errs := make(plotter.YErrors, len(l.XYs))
	for j := range errs {
		errs[j] = struct{ Low, High float64 }{l.Low[j], l.High[j]}
	}
	bars, err := plotter.NewYErrorBars(struct {
		plotter.XYs
		plotter.YErrors
	}{l.XYs, errs})
	if err != nil {
		return err
	}
	bars.Color = s.Color
	p.Add(bars)
	return nil
}
