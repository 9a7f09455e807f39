package plot

import (
	"bytes"
	"image/color"
	"math"
	"slices"

	"extrapolate/internal/atomicfile"

	gonum "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// A Series is one line of a Lines figure: points, a legend label and, for a comparison's
// series, its style, with which it is drawn with its markers; without one, lines take the
// palette's colours in turn.
type Series struct {
	Label string
	XYs   plotter.XYs
	Style *Style
	// Low and High are the error bars below and above each point, drawn with a style; nil
	// for none.
	Low, High []float64
}

// A Mark is a length marked across a Lines figure besides the training length, such as the
// length some series were fine-tuned at, with its legend label.
type Mark struct {
	X     float64
	Label string
}

// dodgeStep is how far apart, in octaves, Lines draws series with error bars.
const dodgeStep = 0.035

// markStyle is a Mark's line's: dotted, in the colour of no scheme.
var markStyle = Style{Color: color.Gray{Y: 60}, Width: vg.Points(1.2), Dashes: []vg.Length{vg.Points(1), vg.Points(3)}}

// Positions draws loss against position in the window (log axis: the number of tokens seen,
// position+1), the training length marked.
func Positions(png, svg, title string, trainLen int, series []Series) error {
	return Lines(png, svg, title, "tokens seen (position in the window + 1, log scale)", "loss (nats per token)", trainLen, false, series)
}

// Accuracy draws passkey accuracy against evaluation length, with the marks besides the
// training length.
func Accuracy(png, svg, title string, trainLen int, series []Series, marks ...Mark) error {
	return Lines(png, svg, title, "evaluation length (tokens, log scale)", "passkey accuracy (mean over depths)", trainLen, true, series, marks...)
}

// Lines draws series against a logarithmic x axis, with the training length and the marks
// marked; with unit, the y axis runs from 0 to 1. With nothing to draw it writes no plot.
func Lines(png, svg, title, xLabel, yLabel string, trainLen int, unit bool, lines []Series, marks ...Mark) (err error) {
	empty := true
	for _, l := range lines {
		empty = empty && len(l.XYs) == 0
	}
	if empty {
		return nil
	}
	defer Recover(png, &err)
	p := gonum.New()
	p.Title.Text = title
	p.X.Label.Text, p.Y.Label.Text = xLabel, yLabel
	p.X.Scale = gonum.LogScale{}
	p.X.Tick.Marker = pow2Ticks{}
	p.Add(plotter.NewGrid())
	legend := gonum.NewLegend()
	legend.Top, legend.Left = true, true
	lo, hi := math.Inf(1), math.Inf(-1)
	minX, maxX := float64(trainLen), float64(trainLen)
	dodge := slices.ContainsFunc(lines, func(l Series) bool { return l.Style != nil && hasSpread(l.High) })
	for i, l := range lines {
		if len(l.XYs) == 0 {
			continue
		}
		for j, xy := range l.XYs {
			ylo, yhi := xy.Y, xy.Y
			if l.Low != nil {
				ylo, yhi = ylo-l.Low[j], yhi+l.High[j]
			}
			lo, hi = math.Min(lo, ylo), math.Max(hi, yhi)
			minX, maxX = math.Min(minX, xy.X), math.Max(maxX, xy.X)
		}
		if l.Style != nil {
			// Series with error bars are moved apart a little in x, so that bars at one
			// length do not hide each other.
			xys := l.XYs
			if dodge {
				xys = slices.Clone(xys)
				for j := range xys {
					xys[j].X *= math.Exp2(dodgeStep * (float64(i) - float64(len(lines)-1)/2))
				}
			}
			if err := addLine(p, &legend, Line{Label: l.Label, XYs: xys, Low: l.Low, High: l.High}, *l.Style, ""); err != nil {
				return err
			}
			continue
		}
		ln, err := plotter.NewLine(l.XYs)
		if err != nil {
			return err
		}
		ln.Color = palette[i%len(palette)]
		ln.Width = vg.Points(1.5)
		ln.Dashes = plotutil.Dashes(i / len(palette))
		p.Add(ln)
		legend.Add(l.Label, ln)
	}
	if unit {
		lo, hi = 0, 1
	}
	pad := math.Max((hi-lo)*0.05, 1e-3)
	p.Y.Min, p.Y.Max = lo-pad, hi+pad
	for _, m := range marks {
		minX, maxX = math.Min(minX, m.X), math.Max(maxX, m.X)
	}
	p.X.Min, p.X.Max = minX/1.2, maxX*1.2
	if err := markTrainLen(p, &legend, trainLen); err != nil {
		return err
	}
	for _, m := range marks {
		mark, err := plotter.NewLine(plotter.XYs{{X: m.X, Y: p.Y.Min}, {X: m.X, Y: p.Y.Max}})
		if err != nil {
			return err
		}
		markStyle.apply(mark, nil)
		p.Add(mark)
		legend.Add(m.Label, mark)
	}
	return save(png, svg, p, &legend)
}

// save writes a plot as PNG and SVG, the legend in a column of its own right of the plot, as
// wide as legendSide.
func save(png, svg string, p *gonum.Plot, legend *gonum.Legend) error {
	const height = 5.5 * vg.Inch
	side := legendSide(legend)
	width := 8.5*vg.Inch + side
	return saveCanvas(png, svg, width, height, func(dc draw.Canvas) {
		if legend != nil {
			p.Draw(draw.Crop(dc, 0, -side, 0, 0))
			legend.Draw(draw.Crop(dc, width-side+0.15*vg.Inch, 0, 0, -0.4*vg.Inch))
		} else {
			p.Draw(dc)
		}
	})
}

// legendSide is the width of the column right of a plot that its legend, if any, takes: 3
// inches, or its widest entry's width, so that no entry is cut at the image's edge.
func legendSide(legend *gonum.Legend) vg.Length {
	if legend == nil {
		return 3 * vg.Inch
	}
	return max(3*vg.Inch, 0.15*vg.Inch+legendWidth(legend)+legendPad)
}

// saveCanvas draws a figure of width × height twice, as PNG (110 dpi) and as SVG, and writes
// each to its file: the one writer of every figure.
func saveCanvas(png, svg string, width, height vg.Length, drawOn func(draw.Canvas)) error {
	for _, format := range []struct{ path, ext string }{{png, "png"}, {svg, "svg"}} {
		var c vg.CanvasWriterTo
		if format.ext == "png" {
			c = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(width, height), vgimg.UseDPI(110))}
		} else {
			c = vgsvg.New(width, height)
		}
		drawOn(draw.New(c))
		var b bytes.Buffer
		if _, err := c.WriteTo(&b); err != nil {
			return err
		}
		if err := atomicfile.WriteFile(format.path, b.Bytes()); err != nil {
			return err
		}
	}
	return nil
}
