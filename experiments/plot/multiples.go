package plot

import (
	"fmt"
	"image/color"

	gonum "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Multiples is a figure of small multiples: a panel per subject (a task), each with a line per
// series in that series' style of every figure, x on a log axis, y a share in [0, 1], and a
// dashed mark at each panel's own edge of training.
type Multiples struct {
	Title, XLabel, YLabel string
	Panels                []Panel
	Cols                  int
}

// Panel is one subject's plot: its lines (one without points is left out), each in its style,
// and the x at which training stops, marked with MarkLabel.
type Panel struct {
	Title     string
	Lines     []Line
	Styles    []Style
	Mark      float64
	MarkLabel string
}

// Save draws the panels, a legend at the end of each row.
func (f Multiples) Save(png, svg string) (err error) {
	defer Recover(png, &err)
	if len(f.Panels) == 0 {
		return nil
	}
	cols := max(1, min(f.Cols, len(f.Panels)))
	fig := Grid{Title: f.Title, XLabel: f.XLabel, Cols: cols}
	for k, pn := range f.Panels {
		p, err := f.panel(pn)
		if err != nil {
			return err
		}
		if k%cols == 0 {
			p.Y.Label.Text = f.YLabel
		}
		fig.Plots = append(fig.Plots, p)
		if k%cols == cols-1 || k == len(f.Panels)-1 {
			fig.Legends = append(fig.Legends, f.rowLegend(k-k%cols, k))
		} else {
			fig.Legends = append(fig.Legends, nil)
		}
	}
	fig.FitLegends(1.6 * vg.Inch)
	rows := (len(f.Panels) + cols - 1) / cols
	// Every tile keeps a legend's column to its right (Grid), drawn or not.
	fig.Width = vg.Length(cols)*(3.4*vg.Inch+fig.LegendWidth) + 0.5*vg.Inch
	fig.Height = vg.Length(rows)*2.8*vg.Inch + 0.9*vg.Inch
	return fig.Save(png, svg)
}

// panel draws one subject's lines over [0, 1], x spanning its points and its mark; the row's
// legend names them (rowLegend).
func (f Multiples) panel(pn Panel) (*gonum.Plot, error) {
	p := gonum.New()
	p.Title.Text = pn.Title
	p.X.Scale, p.X.Tick.Marker = gonum.LogScale{}, pow2Ticks{}
	p.Add(plotter.NewGrid())
	lo, hi := pn.Mark, pn.Mark
	for i, l := range pn.Lines {
		if len(l.XYs) == 0 {
			continue
		}
		for _, xy := range l.XYs {
			lo, hi = min(lo, xy.X), max(hi, xy.X)
		}
		if err := addLine(p, nil, l, pn.Styles[i], ""); err != nil {
			return nil, err
		}
	}
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = lo/1.15, hi*1.15, -0.03, 1.03
	mark := markLine()
	mark.XYs = plotter.XYs{{X: pn.Mark, Y: p.Y.Min}, {X: pn.Mark, Y: p.Y.Max}}
	p.Add(mark)
	return p, nil
}

// markLine is the dashed grey line of a panel's edge of training, without its points.
func markLine() *plotter.Line {
	mark := &plotter.Line{}
	mark.Color = color.Gray{Y: 90}
	mark.Width = vg.Points(1)
	mark.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
	return mark
}

// rowLegend is the legend beside the row of panels first..end: every line of the row's panels,
// once for each label and look, the last panel's first, then the last panel's mark, so that a
// series drawn in one panel only (a scheme run on one task) is named too.
func (f Multiples) rowLegend(first, end int) *gonum.Legend {
	legend := gonum.NewLegend()
	legend.Top, legend.Left = true, true
	legend.TextStyle.Font.Size = vg.Points(9)
	seen := map[string]bool{}
	for _, k := range append([]int{end}, seq(first, end)...) {
		pn := f.Panels[k]
		for i, l := range pn.Lines {
			key := l.Label + "\x00" + look(pn.Styles[i])
			if len(l.XYs) == 0 || seen[key] {
				continue
			}
			seen[key] = true
			ln := &plotter.Line{}
			things := []gonum.Thumbnailer{ln}
			var pts *plotter.Scatter
			if pn.Styles[i].Shape != nil {
				pts = &plotter.Scatter{GlyphStyle: draw.GlyphStyle{Radius: vg.Points(2.5)}}
				things = append(things, pts)
			}
			pn.Styles[i].apply(ln, pts)
			legend.Add(l.Label, things...)
		}
	}
	legend.Add(fmt.Sprint(f.Panels[end].MarkLabel), markLine())
	return &legend
}

// seq is first, first+1, …, end−1.
func seq(first, end int) []int {
	var out []int
	for k := first; k < end; k++ {
		out = append(out, k)
	}
	return out
}
