package plot

import (
	"image/color"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// A Style is how a series is drawn in every figure of a comparison, so that a label keeps its
// colour from the perplexity figure to the loss-by-position and passkey figures.
type Style struct {
	Color  color.Color
	Dashes []vg.Length
	Shape  draw.GlyphDrawer
	Width  vg.Length
}

// seriesColors are twenty colours for lines on white: tab10 with its grey, which the reference
// line uses, swapped for black, then ten darker or more saturated hues for the second ten
// series, which are also dashed. No two of them share a hue and a dash pattern.
var seriesColors = []color.Color{
	color.RGBA{31, 119, 180, 255}, color.RGBA{255, 127, 14, 255}, color.RGBA{44, 160, 44, 255},
	color.RGBA{214, 39, 40, 255}, color.RGBA{148, 103, 189, 255}, color.RGBA{140, 86, 75, 255},
	color.RGBA{227, 119, 194, 255}, color.RGBA{0, 0, 0, 255}, color.RGBA{188, 189, 34, 255},
	color.RGBA{23, 190, 207, 255},

	color.RGBA{0, 0, 128, 255}, color.RGBA{218, 165, 32, 255}, color.RGBA{0, 128, 128, 255},
	color.RGBA{128, 0, 0, 255}, color.RGBA{199, 21, 133, 255}, color.RGBA{85, 107, 47, 255},
	color.RGBA{75, 0, 130, 255}, color.RGBA{250, 128, 114, 255}, color.RGBA{86, 180, 233, 255},
	color.RGBA{154, 205, 50, 255},
}

// SeriesStyle is the style of the i-th series of a comparison: past twenty series the colours
// repeat with another dash pattern.
func SeriesStyle(i int) Style {
	n := len(seriesColors)
	return Style{
		Color:  seriesColors[i%n],
		Dashes: plotutil.Dashes(i / (n / 2)),
		Shape:  plotutil.Shape(i),
		Width:  vg.Points(1.8),
	}
}

// ReferenceStyle is the reference series', plain RoPE's, the thin grey line every panel
// compares against.
var ReferenceStyle = Style{Color: color.Gray{Y: 150}, Width: vg.Points(1.2)}

// apply styles a line and, if not nil, its points: only a style with a shape has points.
func (s Style) apply(l *plotter.Line, p *plotter.Scatter) {
	l.Color, l.Width, l.Dashes = s.Color, s.Width, s.Dashes
	if p != nil {
		p.Color, p.Shape = s.Color, s.Shape
	}
}
