// Package plot draws the figures of runs and comparisons: lines against a logarithmic length
// axis, panels by family of position schemes, heat maps, each series in its style of every
// figure. It knows nothing of runs or reports: its callers hand it points, and it writes each
// figure as PNG and SVG, whole or not at all.
package plot

import (
	"fmt"
	"image/color"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	gonum "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// A Curve is one line of a perplexity-versus-length plot: the mean over seeds at each length,
// and the standard deviation when there are several seeds.
type Curve struct {
	Label     string
	Lengths   []int
	Mean, Std []float64
	// NotApplicable lists lengths the scheme cannot handle, NonFinite those where a seed's
	// loss was not finite and no seed had one.
	NotApplicable, NonFinite []int
	// Style, if set, is the curve's style of every figure; without one, curves take the
	// palette's colours in turn.
	Style *Style
}

// Legend is a curve's label in a legend, with the lengths it has no point at and why.
func (c Curve) Legend() string {
	label := c.Label
	if len(c.NotApplicable) > 0 {
		label += fmt.Sprintf(" (n/a from %d)", c.NotApplicable[0])
	}
	if len(c.NonFinite) > 0 {
		label += fmt.Sprintf(" (non-finite at %s)", joinInts(c.NonFinite))
	}
	return label
}

// pow2Ticks marks the powers of two on a log axis of lengths.
type pow2Ticks struct{}

func (pow2Ticks) Ticks(min, max float64) []gonum.Tick {
	var t []gonum.Tick
	for v := math.Exp2(math.Floor(math.Log2(min))); v <= max*1.0001; v *= 2 {
		if v >= min*0.9999 {
			t = append(t, gonum.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', -1, 64)})
		}
	}
	return t
}

// logTicks labels 1, 2 and 5 times each power of ten on a log axis, and also 1.5, 3 and 7
// when the axis spans less than a factor of 30, so that a short axis still reads; under a
// factor of 3, it labels a linear axis's ticks (linearTicks).
type logTicks struct{}

func (logTicks) Ticks(min, max float64) []gonum.Tick {
	// Under a factor of 3, the steps of a linear axis: 7, 7.5, 8... rather than a lone 7.
	if max/min < 3 {
		return linearTicks{}.Ticks(min, max)
	}
	steps := []float64{1, 2, 5}
	if max/min < 30 {
		steps = []float64{1, 1.5, 2, 3, 5, 7}
	}
	var t []gonum.Tick
	for e := math.Floor(math.Log10(min)); e <= math.Ceil(math.Log10(max)); e++ {
		for _, s := range steps {
			v := s * math.Pow(10, e)
			if v >= min*0.999 && v <= max*1.001 {
				t = append(t, gonum.Tick{Value: v, Label: strconv.FormatFloat(v, 'g', 4, 64)})
			}
		}
	}
	return t
}

// Perplexity draws perplexity against evaluation length, both axes logarithmic, with the
// training length marked, into the files png and svg of dir. With nothing to draw (every length
// not applicable, every run failed) it writes no plot.
func Perplexity(dir, png, svg, title string, trainLen int, curves []Curve) (err error) {
	empty := true
	for _, c := range curves {
		empty = empty && len(c.Lengths) == 0
	}
	if empty {
		return nil
	}
	defer Recover(png, &err)
	p := gonum.New()
	p.Title.Text = title
	p.X.Label.Text = "evaluation length (tokens, log scale)"
	p.Y.Label.Text = "perplexity (log scale)"
	p.X.Scale = gonum.LogScale{}
	p.X.Tick.Marker = pow2Ticks{}
	p.Y.Scale = gonum.LogScale{}
	p.Y.Tick.Marker = logTicks{}
	legend := gonum.NewLegend()
	legend.Top, legend.Left = true, true
	p.Add(plotter.NewGrid())
	lo, hi := math.Inf(1), math.Inf(-1)
	minX, maxX := float64(trainLen), float64(trainLen)
	for i, c := range curves {
		label := c.Legend()
		if len(c.Lengths) == 0 {
			continue
		}
		pts := make(plotter.XYs, len(c.Lengths))
		errs := make(plotter.YErrors, len(c.Lengths))
		for j, n := range c.Lengths {
			pts[j] = plotter.XY{X: float64(n), Y: c.Mean[j]}
			// On a log axis a bar cannot reach 0: the lower one stops at a tenth of the mean.
			low := math.Min(c.Std[j], 0.9*c.Mean[j])
			errs[j] = struct{ Low, High float64 }{low, c.Std[j]}
			lo, hi = math.Min(lo, c.Mean[j]-low), math.Max(hi, c.Mean[j]+c.Std[j])
			minX, maxX = math.Min(minX, float64(n)), math.Max(maxX, float64(n))
		}
		line, points, err := plotter.NewLinePoints(pts)
		if err != nil {
			return err
		}
		col := palette[i%len(palette)]
		line.Color, points.Color = col, col
		line.Width = vg.Points(1.5)
		line.Dashes = plotutil.Dashes(i / len(palette))
		points.Shape = plotutil.Shape(i)
		if c.Style != nil {
			col = c.Style.Color
			c.Style.apply(line, points)
			if c.Style.Shape == nil {
				points.Shape = draw.CircleGlyph{}
				points.Radius = vg.Points(1.5)
			}
		}
		p.Add(line, points)
		legend.Add(label, line, points)
		if hasSpread(c.Std) {
			bars, err := plotter.NewYErrorBars(struct {
				plotter.XYs
				plotter.YErrors
			}{pts, errs})
			if err != nil {
				return err
			}
			bars.Color = col
			p.Add(bars)
		}
	}
	if !math.IsInf(lo, 0) {
		lo = math.Max(lo, 1e-3)
		p.Y.Min, p.Y.Max = lo*0.9, hi*1.1
		if err := markTrainLen(p, &legend, trainLen); err != nil {
			return err
		}
		p.X.Min, p.X.Max = minX/1.2, maxX*1.2
	}
	return save(filepath.Join(dir, png), filepath.Join(dir, svg), p, &legend)
}

// Recover turns a panic of gonum/plot, which some degenerate inputs cause, into *err, naming
// the figure png: a plot must never cost a run its results. Every writer here defers it, and so
// does a caller that lays out a figure of its own.
func Recover(png string, err *error) {
	if r := recover(); r != nil {
		*err = fmt.Errorf("drawing %s: %v", png, r)
	}
}

// markTrainLen draws the training length as a dashed vertical line across the y axis's range.
func markTrainLen(p *gonum.Plot, legend *gonum.Legend, trainLen int) error {
	vline, err := plotter.NewLine(plotter.XYs{{X: float64(trainLen), Y: p.Y.Min}, {X: float64(trainLen), Y: p.Y.Max}})
	if err != nil {
		return err
	}
	vline.Color = color.Gray{Y: 90}
	vline.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
	p.Add(vline)
	legend.Add(fmt.Sprintf("training length %d", trainLen), vline)
	return nil
}

// palette is the tab10 colour cycle: ten colours told apart easily.
var palette = []color.Color{
	color.RGBA{31, 119, 180, 255}, color.RGBA{255, 127, 14, 255}, color.RGBA{44, 160, 44, 255},
	color.RGBA{214, 39, 40, 255}, color.RGBA{148, 103, 189, 255}, color.RGBA{140, 86, 75, 255},
	color.RGBA{227, 119, 194, 255}, color.RGBA{127, 127, 127, 255}, color.RGBA{188, 189, 34, 255},
	color.RGBA{23, 190, 207, 255},
}

func hasSpread(std []float64) bool {
	for _, s := range std {
		if s > 0 {
			return true
		}
	}
	return false
}

func joinInts(x []int) string {
	s := make([]string, len(x))
	for i, v := range x {
		s[i] = strconv.Itoa(v)
	}
	return strings.Join(s, ", ")
}
