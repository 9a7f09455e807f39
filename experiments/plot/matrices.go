package plot

import (
	"image/color"
	"math"
	"strconv"

	gonum "gonum.org/v1/plot"
	gonumpalette "gonum.org/v1/plot/palette"
	"gonum.org/v1/plot/palette/moreland"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
)

// Matrices is a figure of small heat maps, a panel per subject (a task): a row per series (a
// scheme), a column per size, each cell coloured and numbered by its share (exact match) on one
// colour scale for every panel. Where a line plot of many panels hides lines under each other
// at 0 and needs a colour per scheme, a row per scheme names itself and every value shows.
type Matrices struct {
	Title  string
	Panels []Matrix
	Cols   int
}

// Matrix is one subject's panel.
type Matrix struct {
	// Title is the panel's; XLabel titles its sizes' axis, with their unit.
	Title, XLabel string
	// Rows name the series, top to bottom; Sizes are the columns.
	Rows  []string
	Sizes []int
	// Values are by row, then column: a share in [0, 1], NaN where the row has no score at
	// the size (drawn grey, "n/a").
	Values [][]float64
	// Mark is the largest training size, marked by a line after the last column at most it;
	// 0 for none.
	Mark int
}

// cellColors is the colour scale of every panel of a Matrices figure: the passkey heat maps'.
func cellColors() gonumpalette.ColorMap {
	cm := moreland.ExtendedBlackBody()
	cm.SetMin(0)
	cm.SetMax(1)
	return cm
}

// matrixGrid adapts a Matrix to gonum's heat map: column c, and row r counted from the bottom.
type matrixGrid Matrix

func (m matrixGrid) Dims() (c, r int) { return len(m.Sizes), len(m.Rows) }
func (m matrixGrid) X(c int) float64  { return float64(c) }
func (m matrixGrid) Y(r int) float64  { return float64(r) }
func (m matrixGrid) Z(c, r int) float64 {
	return m.Values[len(m.Rows)-1-r][c]
}

// Save draws the panels in a grid of Cols columns; with no panel it writes nothing.
func (f Matrices) Save(png, svg string) (err error) {
	defer Recover(png, &err)
	fig, ok, err := f.grid()
	if !ok || err != nil {
		return err
	}
	return fig.Save(png, svg)
}

// grid lays the panels out, false when there is none: every tile as tall as the panel with the
// most rows needs.
func (f Matrices) grid() (Grid, bool, error) {
	if len(f.Panels) == 0 {
		return Grid{}, false, nil
	}
	cols := max(1, min(f.Cols, len(f.Panels)))
	fig := Grid{Title: f.Title, Cols: cols}
	most := 0
	for _, m := range f.Panels {
		p, err := m.plot()
		if err != nil {
			return Grid{}, false, err
		}
		fig.Plots = append(fig.Plots, p)
		most = max(most, len(m.Rows))
	}
	rows := (len(f.Panels) + cols - 1) / cols
	fig.Width = vg.Length(cols)*4.6*vg.Inch + 0.5*vg.Inch
	fig.Height = vg.Length(rows)*(vg.Length(most)*0.2*vg.Inch+1.1*vg.Inch) + 0.7*vg.Inch
	return fig, true, nil
}

// plot draws one panel: the cells, their numbers in percent, and the training mark.
func (m Matrix) plot() (*gonum.Plot, error) {
	p := gonum.New()
	p.Title.Text = m.Title
	p.Title.TextStyle.Font.Size = vg.Points(11)
	p.X.Label.Text, p.Y.Label.Text = m.XLabel, "scheme"
	h := plotter.NewHeatMap(matrixGrid(m), cellColors().Palette(256))
	h.Min, h.Max = 0, 1
	h.NaN = color.Gray{Y: 200}
	p.Add(h)
	var xt, yt indexTicks
	for _, n := range m.Sizes {
		xt = append(xt, strconv.Itoa(n))
	}
	for r := range m.Rows {
		yt = append(yt, m.Rows[len(m.Rows)-1-r])
	}
	p.X.Tick.Marker, p.Y.Tick.Marker = xt, yt
	p.Y.Tick.Label.Font.Size = vg.Points(8)
	var cells plotter.XYLabels
	var dark []bool
	for r, row := range m.Values {
		for c, v := range row {
			cells.XYs = append(cells.XYs, plotter.XY{X: float64(c), Y: float64(len(m.Rows) - 1 - r)})
			cells.Labels = append(cells.Labels, percent(v))
			dark = append(dark, v < 0.45)
		}
	}
	if len(cells.XYs) > 0 {
		labels, err := plotter.NewLabels(cells)
		if err != nil {
			return nil, err
		}
		for k := range labels.TextStyle {
			labels.TextStyle[k].XAlign, labels.TextStyle[k].YAlign = text.XCenter, text.YCenter
			labels.TextStyle[k].Font.Size = vg.Points(7.5)
			// Dark cells (low shares) get white numbers.
			if dark[k] {
				labels.TextStyle[k].Color = color.White
			}
		}
		p.Add(labels)
	}
	p.X.Min, p.X.Max = -0.5, float64(len(m.Sizes))-0.5
	p.Y.Min, p.Y.Max = -0.5, float64(len(m.Rows))-0.5
	if x, ok := columnEdge(m.Sizes, m.Mark); ok && m.Mark > 0 && x < p.X.Max {
		line, err := plotter.NewLine(plotter.XYs{{X: x, Y: p.Y.Min}, {X: x, Y: p.Y.Max}})
		if err != nil {
			return nil, err
		}
		trainMarkStyle.apply(line, nil)
		p.Add(line)
	}
	return p, nil
}

// percent is a cell's number: a share in whole percent, "n/a" for NaN.
func percent(v float64) string {
	if math.IsNaN(v) {
		return "n/a"
	}
	return strconv.Itoa(int(math.Round(100 * v)))
}
