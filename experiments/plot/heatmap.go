package plot

import (
	"fmt"
	"image/color"
	"math"
	"strconv"

	gonum "gonum.org/v1/plot"
	"gonum.org/v1/plot/palette/moreland"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
)

// heatGrid adapts accuracies to gonum's heat map: columns are lengths, rows depths; not
// applicable, a negative accuracy, is NaN.
type heatGrid struct {
	lengths []int
	depths  []float64
	acc     [][]float64
}

func (h heatGrid) Dims() (c, r int) { return len(h.lengths), len(h.depths) }
func (h heatGrid) X(c int) float64  { return float64(c) }
func (h heatGrid) Y(r int) float64  { return float64(r) }
func (h heatGrid) Z(c, r int) float64 {
	if v := h.acc[c][r]; v >= 0 {
		return v
	}
	return math.NaN()
}

// indexTicks labels the cells of a heat map's axis.
type indexTicks []string

func (t indexTicks) Ticks(min, max float64) []gonum.Tick {
	var out []gonum.Tick
	for i, s := range t {
		out = append(out, gonum.Tick{Value: float64(i), Label: s})
	}
	return out
}

// HeatMap draws passkey accuracy by length (x) and depth (y), acc[i][j] at lengths[i] and
// depths[j], each cell's colour and number its accuracy; grey where not applicable (negative).
func HeatMap(png, svg, title string, trainLen int, lengths []int, depths []float64, acc [][]float64) (err error) {
	g := heatGrid{lengths, depths, acc}
	if len(g.lengths) == 0 {
		return nil
	}
	defer Recover(png, &err)
	p := gonum.New()
	p.Title.Text = title
	p.X.Label.Text, p.Y.Label.Text = "evaluation length", "needle depth (0%: start of the filler, 100%: just before the question)"
	cm := moreland.ExtendedBlackBody()
	cm.SetMin(0)
	cm.SetMax(1)
	h := plotter.NewHeatMap(g, cm.Palette(256))
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
	return save(png, svg, p, nil)
}
