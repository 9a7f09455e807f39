package plot

import (
	"fmt"
	"image/color"
	"math"

	gonum "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// A BreakPoint is one run of the predicted-against-measured figure, both as multiples of its
// training length.
type BreakPoint struct {
	// Group names the grid point, which gives the run its colour.
	Group               string
	Predicted, Measured float64
	// Broke is false for a run that did not break within its longest length, Measured.
	Broke bool
}

// Breakpoints draws each run's measured breakpoint against the one predicted for it, both axes
// logarithmic: the diagonal where they agree, the band within factor of it shaded, a colour per
// group, and an open circle, at its longest length, for a run that did not break. The caller
// saves the figure, deferring Recover.
func Breakpoints(title string, pts []BreakPoint, factor float64) (Grid, error) {
	p := gonum.New()
	p.X.Label.Text = "predicted breakpoint, T_extra (multiples of the training length, log scale)"
	p.Y.Label.Text = "measured breakpoint (multiples of the training length, log scale)"
	p.X.Scale, p.Y.Scale = gonum.LogScale{}, gonum.LogScale{}
	p.X.Tick.Marker, p.Y.Tick.Marker = logTicks{}, logTicks{}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, q := range pts {
		lo, hi = math.Min(lo, math.Min(q.Predicted, q.Measured)), math.Max(hi, math.Max(q.Predicted, q.Measured))
	}
	if len(pts) == 0 {
		lo, hi = 1, 2
	}
	lo, hi = math.Min(lo, 1)/1.15, hi*1.15
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = lo, hi, lo, hi
	band, err := plotter.NewPolygon(plotter.XYs{{X: lo, Y: lo / factor}, {X: hi, Y: hi / factor}, {X: hi, Y: hi}, {X: hi / factor, Y: hi}, {X: lo, Y: lo * factor}})
	if err != nil {
		return Grid{}, err
	}
	band.Color, band.LineStyle.Width = passColor, 0
	diag, err := plotter.NewLine(plotter.XYs{{X: lo, Y: lo}, {X: hi, Y: hi}})
	if err != nil {
		return Grid{}, err
	}
	diag.Color, diag.Dashes = color.Gray{Y: 90}, []vg.Length{vg.Points(4), vg.Points(3)}
	p.Add(band, plotter.NewGrid(), diag)
	legend := gonum.NewLegend()
	legend.Add("measured = predicted", diag)
	legend.Add(fmt.Sprintf("within a factor %g", factor), band)
	var groups []string
	for _, q := range pts {
		if len(groups) == 0 || groups[len(groups)-1] != q.Group {
			groups = append(groups, q.Group)
		}
	}
	for k, g := range groups {
		for _, broke := range []bool{true, false} {
			var xy plotter.XYs
			for _, q := range pts {
				if q.Group == g && q.Broke == broke {
					xy = append(xy, plotter.XY{X: q.Predicted, Y: q.Measured})
				}
			}
			if len(xy) == 0 {
				continue
			}
			sc, err := plotter.NewScatter(xy)
			if err != nil {
				return Grid{}, err
			}
			sc.Color, sc.Radius = palette[k%len(palette)], vg.Points(3.5)
			name := g
			if broke {
				sc.Shape = draw.CircleGlyph{}
			} else {
				sc.Shape, name = draw.RingGlyph{}, g+": no break up to the longest length"
			}
			p.Add(sc)
			legend.Add(name, sc)
		}
	}
	legend.Top = true
	return Grid{Title: title, Plots: []*gonum.Plot{p}, Legends: []*gonum.Legend{&legend}, Cols: 1,
		Width: 10 * vg.Inch, Height: 6.5 * vg.Inch, LegendWidth: 2.6 * vg.Inch}, nil
}
