package plot

import (
	"bytes"
	"math"

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
// series, its style; without one, lines take the palette's colours in turn.
type Series struct {
	Label string
	XYs   plotter.XYs
	Style *Style
}

// Positions draws loss against position in the window (log axis: the number of tokens seen,
// position+1), the training length marked.
func Positions(png, svg, title string, trainLen int, series []Series) error {
	return Lines(png, svg, title, "tokens seen (position in the window + 1, log scale)", "loss (nats per token)", trainLen, false, series)
}

// Accuracy draws passkey accuracy against evaluation length.
func Accuracy(png, svg, title string, trainLen int, series []Series) error {
	return Lines(png, svg, title, "evaluation length (tokens, log scale)", "passkey accuracy (mean over depths)", trainLen, true, series)
}

// Lines draws series against a logarithmic x axis, with the training length marked; with unit,
// the y axis runs from 0 to 1. With nothing to draw it writes no plot.
func Lines(png, svg, title, xLabel, yLabel string, trainLen int, unit bool, lines []Series) (err error) {
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
	for i, l := range lines {
		if len(l.XYs) == 0 {
			continue
		}
		for _, xy := range l.XYs {
			lo, hi = math.Min(lo, xy.Y), math.Max(hi, xy.Y)
			minX, maxX = math.Min(minX, xy.X), math.Max(maxX, xy.X)
		}
		ln, err := plotter.NewLine(l.XYs)
		if err != nil {
			return err
		}
		if l.Style != nil {
			l.Style.apply(ln, nil)
		} else {
			ln.Color = palette[i%len(palette)]
			ln.Width = vg.Points(1.5)
			ln.Dashes = plotutil.Dashes(i / len(palette))
		}
		p.Add(ln)
		legend.Add(l.Label, ln)
	}
	if unit {
		lo, hi = 0, 1
	}
	pad := math.Max((hi-lo)*0.05, 1e-3)
	p.Y.Min, p.Y.Max = lo-pad, hi+pad
	p.X.Min, p.X.Max = minX/1.2, maxX*1.2
	if err := markTrainLen(p, &legend, trainLen); err != nil {
		return err
	}
	return save(png, svg, p, &legend)
}

// save writes a plot as PNG and SVG, the legend in a column of its own right of the plot.
func save(png, svg string, p *gonum.Plot, legend *gonum.Legend) error {
	const width, height, side = 11.5 * vg.Inch, 5.5 * vg.Inch, 3 * vg.Inch
	return saveCanvas(png, svg, width, height, func(dc draw.Canvas) {
		if legend != nil {
			p.Draw(draw.Crop(dc, 0, -side, 0, 0))
			legend.Draw(draw.Crop(dc, width-side+0.15*vg.Inch, 0, 0, -0.4*vg.Inch))
		} else {
			p.Draw(dc)
		}
	})
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
