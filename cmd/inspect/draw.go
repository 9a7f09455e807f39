package main

import (
	"bytes"
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/palette/moreland"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// picture draws what the scheme provides: a rotation's wavelengths and scores, a bias against
// distance per head and layer, a table as a heat map.
func picture(rep *report) ([]byte, error) {
	plots, err := plotsOf(rep, "")
	if err != nil {
		return nil, err
	}
	for l, r := range rep.PerLayer {
		p, err := plotsOf(r, fmt.Sprintf("layer %d, %s: ", l, r.Scheme))
		if err != nil {
			return nil, err
		}
		if len(p) == 0 {
			p = []*plot.Plot{plot.New()}
			p[0].Title.Text = fmt.Sprintf("layer %d, %s: no position information", l, r.Scheme)
		}
		plots = append(plots, p...)
	}
	if c := rep.Content; c != nil {
		p, err := contentPlots(c)
		if err != nil {
			return nil, err
		}
		if len(p) > maxPlots {
			return nil, fmt.Errorf("-checkpoint: %d pictures of what its layers make of the text, above %d to draw; use -json", len(p), maxPlots)
		}
		plots = append(plots, p...)
	}
	if len(plots) == 0 && rep.readsContent {
		return nil, fmt.Errorf("-scheme: %s has nothing to draw without a checkpoint: it reads the content; give a trained one with -checkpoint FILE", rep.Scheme)
	}
	if len(plots) == 0 {
		return nil, fmt.Errorf("-scheme: %s has nothing to draw (it adds no table, rotation or bias)", rep.Scheme)
	}
	title := fmt.Sprintf("%s, %d heads of dimension %d, L=%d, n=%d", rep.Scheme, rep.Heads, rep.Dim, rep.TrainLen, rep.EvalLen)
	if rep.Content != nil {
		title = fmt.Sprintf("%s, %d heads of dimension %d, L=%d, on a text of %d bytes", rep.Scheme, rep.Heads, rep.Dim, rep.TrainLen, len(rep.Content.IDs))
	}
	if rep.Checkpoint != "" {
		title += ", trained: " + rep.Checkpoint
		if rep.Partial != "" {
			title += " (partly: saved at " + rep.Partial + ")"
		}
	}
	return tiles(plots, title)
}

// plotsOf draws one scheme's rotation, bias and table, each title after prefix.
func plotsOf(rep *report, prefix string) ([]*plot.Plot, error) {
	var plots []*plot.Plot
	if rep.InvFreq != nil {
		p, err := drawRotation(rep, prefix)
		if err != nil {
			return nil, err
		}
		plots = append(plots, p...)
	}
	for l, heads := range rep.Bias {
		p := plot.New()
		p.Title.Text = fmt.Sprintf("%sbias against distance, layer %d", prefix, l)
		if len(rep.Bias) == 1 {
			p.Title.Text = prefix + "bias against distance"
		}
		p.X.Label.Text = "distance i−j (positions)"
		p.Y.Label.Text = "bias added to the score"
		for h, row := range heads {
			if err := addLine(p, fmt.Sprintf("head %d", h), h, func(d int) (float64, float64) { return float64(d), row[d] }, len(row)); err != nil {
				return nil, err
			}
		}
		if err := addLine(p, fmt.Sprintf("training length %d", rep.TrainLen), 5, func(i int) (float64, float64) {
			lo, hi := p.Y.Min, p.Y.Max
			return float64(rep.TrainLen), lo + float64(i)*(hi-lo)
		}, 2); err != nil {
			return nil, err
		}
		p.Legend.Top = true
		plots = append(plots, p)
	}
	if t := rep.Table; t != nil {
		cols := len(t[0])
		plots = append(plots, heatMap(fmt.Sprintf("position table, %d positions × %d dimensions", len(t), cols), "dimension", "position", len(t), cols, func(i, j int) float64 { return t[i][j] }))
	}
	return plots, nil
}

func drawRotation(rep *report, prefix string) ([]*plot.Plot, error) {
	f0, a0 := rep.plain.InvFreq, rep.plain.AttentionFactor
	f1, a1 := rep.InvFreq, rep.AttentionFactor
	label := "scaled: " + rep.Scaling + " factor " + rep.Factor
	scaled := rep.Scaling != ""

	wl := plot.New()
	wl.Title.Text = prefix + "wavelength of each rotated pair"
	wl.X.Label.Text = "pair i"
	wl.Y.Label.Text = "wavelength 2π/θᵢ (positions, log scale)"
	wl.Y.Scale = plot.LogScale{}
	wl.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	if err := addLine(wl, "unscaled", 0, func(i int) (float64, float64) { return float64(i), 2 * math.Pi / f0[i] }, len(f0)); err != nil {
		return nil, err
	}
	if scaled {
		if err := addLine(wl, label, 1, func(i int) (float64, float64) { return float64(i), 2 * math.Pi / f1[i] }, len(f1)); err != nil {
			return nil, err
		}
	}
	for k, n := range []int{rep.TrainLen, rep.EvalLen} {
		name := fmt.Sprintf("training length %d", n)
		if k == 1 {
			name = fmt.Sprintf("evaluation length %d", n)
		}
		if err := addLine(wl, name, 5+k, func(i int) (float64, float64) { return float64(i * (len(f0) - 1)), float64(n) }, 2); err != nil {
			return nil, err
		}
	}
	wl.Legend.Top = true

	// The score of q = k = (1, ..., 1)/√d at each distance: Σ over pairs of 2cos(δ·θᵢ)/d, times
	// the attention factor squared.
	score := func(f []float64, att float64) func(int) (float64, float64) {
		return func(dist int) (float64, float64) {
			s := 0.0
			for _, th := range f {
				s += 2 * math.Cos(float64(dist)*th)
			}
			return float64(dist), att * att * s / float64(2*len(f))
		}
	}
	sp := plot.New()
	sp.Title.Text = prefix + "q·k of a fixed pair against distance"
	sp.X.Label.Text = "relative distance (positions)"
	sp.Y.Label.Text = "score"
	if err := addLine(sp, "unscaled", 0, score(f0, a0), rep.EvalLen); err != nil {
		return nil, err
	}
	if scaled {
		if err := addLine(sp, label, 1, score(f1, a1), rep.EvalLen); err != nil {
			return nil, err
		}
	}
	sp.Legend.Top = true
	return []*plot.Plot{wl, sp}, nil
}

var colors = []color.Color{
	color.RGBA{R: 31, G: 119, B: 180, A: 255}, color.RGBA{R: 214, G: 39, B: 40, A: 255},
	color.RGBA{R: 44, G: 160, B: 44, A: 255}, color.RGBA{R: 148, G: 103, B: 189, A: 255},
	color.RGBA{R: 255, G: 127, B: 14, A: 255}, color.Gray{Y: 110}, color.Gray{Y: 170},
}

func addLine(p *plot.Plot, label string, style int, f func(int) (float64, float64), n int) error {
	pts := make(plotter.XYs, n)
	for i := range pts {
		pts[i].X, pts[i].Y = f(i)
	}
	l, err := plotter.NewLine(pts)
	if err != nil {
		return err
	}
	l.Color = colors[style%len(colors)]
	l.Width = vg.Points(1.5)
	if style >= 5 {
		l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
	}
	p.Add(l)
	p.Legend.Add(label, l)
	return nil
}

// grid is a function on a rows × cols grid, for a heat map.
type grid struct {
	rows, cols int
	z          func(r, c int) float64
}

func (g grid) Dims() (c, r int)   { return g.cols, g.rows }
func (g grid) Z(c, r int) float64 { return g.z(r, c) }
func (g grid) X(c int) float64    { return float64(c) }
func (g grid) Y(r int) float64    { return float64(r) }
func (g grid) Min() float64       { return g.extreme(math.Min) }
func (g grid) Max() float64       { return g.extreme(math.Max) }
func (g grid) extreme(f func(a, b float64) float64) float64 {
	v := math.NaN()
	for r := 0; r < g.rows; r++ {
		for c := 0; c < g.cols; c++ {
			if z := g.z(r, c); !math.IsNaN(z) {
				if math.IsNaN(v) {
					v = z
				}
				v = f(v, z)
			}
		}
	}
	return v
}

func heatMap(title, xLabel, yLabel string, rows, cols int, z func(r, c int) float64) *plot.Plot {
	g := grid{rows: rows, cols: cols, z: z}
	pal := moreland.SmoothBlueRed()
	lo, hi := g.Min()+0, g.Max()+0 // +0 prints -0 as 0
	if lo == hi {
		hi = lo + 1
	}
	pal.SetMin(lo)
	pal.SetMax(hi)
	h := plotter.NewHeatMap(g, pal.Palette(255))
	h.NaN = color.White
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s (%.3g to %.3g)", title, lo, hi)
	p.X.Label.Text = xLabel
	p.Y.Label.Text = yLabel
	p.Y.Scale = reversed{}
	p.Add(h)
	return p
}

// reversed puts the first row at the top, as a matrix is written.
type reversed struct{}

func (reversed) Normalize(min, max, x float64) float64 { return (max - x) / (max - min) }

// tiles draws plots side by side into a PNG.
func tiles(plots []*plot.Plot, title string) ([]byte, error) {
	cols := min(len(plots), 4)
	rows := (len(plots) + cols - 1) / cols
	w, h := vg.Length(cols)*4.5*vg.Inch, vg.Length(rows)*4*vg.Inch+0.4*vg.Inch
	img := vgimg.New(w, h)
	dc := draw.New(img)
	if title != "" {
		dc.FillText(draw.TextStyle{Color: color.Black, Font: font.From(plot.DefaultFont, 14), XAlign: draw.XCenter, Handler: plot.DefaultTextHandler},
			vg.Point{X: w / 2, Y: h - 0.25*vg.Inch}, title)
		dc = draw.Crop(dc, 0, 0, 0, -0.4*vg.Inch)
	}
	grid := make([][]*plot.Plot, rows)
	for i := range grid {
		grid[i] = make([]*plot.Plot, cols)
		for j := range grid[i] {
			if k := i*cols + j; k < len(plots) {
				grid[i][j] = plots[k]
			}
		}
	}
	canvases := plot.Align(grid, draw.Tiles{Rows: rows, Cols: cols, PadX: vg.Millimeter * 4, PadY: vg.Millimeter * 4, PadTop: vg.Millimeter * 2}, dc)
	for i := range grid {
		for j, p := range grid[i] {
			if p != nil {
				p.Draw(canvases[i][j])
			}
		}
	}
	var b bytes.Buffer
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(&b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
