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
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
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
// depths[j], each cell's colour and number its accuracy, grey where not applicable (negative),
// with a colour bar. The training length, and fineTune when the run was fine-tuned at a longer
// length (0 when not), are marked by a line after the last column they cover.
func HeatMap(png, svg, title string, trainLen, fineTune int, lengths []int, depths []float64, acc [][]float64) (err error) {
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
		label := fmt.Sprintf("%d (%gx)", n, float64(n)/float64(trainLen))
		switch n {
		case trainLen:
			label += "\ntraining length (blue dashes)"
		case fineTune:
			label += "\nfine-tuning length (green line)"
		}
		xt = append(xt, label)
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
	for _, m := range []struct {
		n     int
		style Style
	}{{trainLen, trainMarkStyle}, {fineTune, fineTuneMarkStyle}} {
		x, ok := columnEdge(g.lengths, m.n)
		if !ok || m.n <= 0 {
			continue
		}
		line, err := plotter.NewLine(plotter.XYs{{X: x, Y: p.Y.Min}, {X: x, Y: p.Y.Max}})
		if err != nil {
			return err
		}
		m.style.apply(line, nil)
		p.Add(line)
	}
	bar := gonum.New()
	bar.HideX()
	bar.Y.Label.Text = "accuracy"
	bar.Y.Min, bar.Y.Max = 0, 1
	bar.Y.Tick.Marker = percentTicks{}
	bar.Y.Padding = 0
	bar.Add(&plotter.ColorBar{ColorMap: cm, Vertical: true})
	const width, height, side = 11.5 * vg.Inch, 5.5 * vg.Inch, 1.2 * vg.Inch
	return saveCanvas(png, svg, width, height, func(dc draw.Canvas) {
		heat := draw.Crop(dc, 0, -side, 0, 0)
		p.Draw(heat)
		// The bar spans the heat map's data area, beside it.
		data := p.DataCanvas(heat)
		bar.Draw(draw.Crop(dc, width-side+0.25*vg.Inch, -0.35*vg.Inch, data.Min.Y-dc.Min.Y, data.Max.Y-dc.Max.Y))
	})
}

// Marks of a heat map: the training length's and the fine-tuning length's, drawn after the last
// column they cover in colours that show on black and on pale yellow.
var (
	trainMarkStyle    = Style{Color: color.RGBA{86, 180, 233, 255}, Width: vg.Points(2.5), Dashes: []vg.Length{vg.Points(6), vg.Points(3)}}
	fineTuneMarkStyle = Style{Color: color.RGBA{0, 158, 115, 255}, Width: vg.Points(3.5)}
)

// columnEdge is the x of the edge after the last column of a length at most n, false when n is
// below every length.
func columnEdge(lengths []int, n int) (float64, bool) {
	last := -1
	for i, l := range lengths {
		if l <= n {
			last = i
		}
	}
	return float64(last) + 0.5, last >= 0
}

// percentTicks labels a share's axis at every 20%.
type percentTicks struct{}

func (percentTicks) Ticks(min, max float64) []gonum.Tick {
	var t []gonum.Tick
	for k := 0; k <= 10; k++ {
		v := float64(k) / 10
		if v < min-1e-9 || v > max+1e-9 {
			continue
		}
		label := ""
		if k%2 == 0 {
			label = strconv.Itoa(10*k) + "%"
		}
		t = append(t, gonum.Tick{Value: v, Label: label})
	}
	return t
}
