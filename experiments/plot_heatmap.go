package experiments

import (
	"fmt"
	"image/color"
	"math"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/palette/moreland"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
)

// heatGrid adapts a grid to gonum's heat map: columns are lengths, rows depths; not applicable
// is NaN.
type heatGrid struct{ g grid }

func (h heatGrid) Dims() (c, r int) { return len(h.g.lengths), len(h.g.depths) }
func (h heatGrid) X(c int) float64  { return float64(c) }
func (h heatGrid) Y(r int) float64  { return float64(r) }
func (h heatGrid) Z(c, r int) float64 {
	if v := h.g.acc[c][r]; v >= 0 {
		return v
	}
	return math.NaN()
}

// indexTicks labels the cells of a heat map's axis.
type indexTicks []string

func (t indexTicks) Ticks(min, max float64) []plot.Tick {
	var out []plot.Tick
	for i, s := range t {
		out = append(out, plot.Tick{Value: float64(i), Label: s})
	}
	return out
}

// writeHeatMap draws passkey accuracy by length (x) and depth (y), each cell's colour and
// number its accuracy; grey where not applicable.
func writeHeatMap(png, svg, title string, trainLen int, g grid) (err error) {
	if len(g.lengths) == 0 {
		return nil
	}
	defer recoverDrawing(png, &err)
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text, p.Y.Label.Text = "evaluation length", "needle depth (0%: start of the filler, 100%: just before the question)"
	cm := moreland.ExtendedBlackBody()
	cm.SetMin(0)
	cm.SetMax(1)
	h := plotter.NewHeatMap(heatGrid{g}, cm.Palette(256))
	h.Min, h.Max = 0, 1
	h.NaN = color.Gray{Y: 200}
	p.Add(h)
	var xt, yt indexTicks
	for _, n := range g.lengths {
		xt = append(xt, fmt.Sprintf("%d (%gx)", n, float64(n)/float64(trainLen)))
	}
	for _, d := range g.depths {
		yt = append(yt, fmt.Sprintf("%g%%", 100*d))
	}
	p.X.Tick.Marker, p.Y.Tick.Marker = xt, yt
	var cells plotter.XYLabels
	for i := range g.lengths {
		for j := range g.depths {
			label := "n/a"
			if v := g.acc[i][j]; v >= 0 {
				label = strconv.Itoa(int(math.Round(100*v))) + "%"
			}
			cells.XYs = append(cells.XYs, plotter.XY{X: float64(i), Y: float64(j)})
			cells.Labels = append(cells.Labels, label)
		}
	}
	labels, err := plotter.NewLabels(cells)
	if err != nil {
		return err
	}
	for k := range labels.TextStyle {
		i, j := k/len(g.depths), k%len(g.depths)
		labels.TextStyle[k].XAlign, labels.TextStyle[k].YAlign = text.XCenter, text.YCenter
		// Dark cells (low accuracy) get white numbers.
		if v := g.acc[i][j]; v >= 0 && v < 0.45 {
			labels.TextStyle[k].Color = color.White
		}
	}
	p.Add(labels)
	p.X.Min, p.X.Max = -0.5, float64(len(g.lengths))-0.5
	p.Y.Min, p.Y.Max = -0.5, float64(len(g.depths))-0.5
	return savePlot(png, svg, p, nil)
}
