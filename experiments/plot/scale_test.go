package plot

import (
	"math"
	"strconv"
	"strings"
	"testing"

	gonum "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// TestLinearTicks checks that every labelled tick of a ratio axis says its value: gonum's own
// ticks labelled 1.05, 1.08 and 1.15 "1.1".
func TestLinearTicks(t *testing.T) {
	for _, r := range [][2]float64{{0.937, 1.058}, {0.91, 1.085}, {0.98, 1.16}, {1.3, 11.2}, {0.25, 0.86}, {0.9, 1.9}, {0.999, 1.001}, {-0.05, 1.05}, {-0.3, 6.6}} {
		var labelled []gonum.Tick
		for _, tk := range (linearTicks{}).Ticks(r[0], r[1]) {
			if tk.Value < r[0] || tk.Value > r[1] {
				t.Errorf("%v: tick %v off the axis", r, tk.Value)
			}
			if tk.Label != "" {
				labelled = append(labelled, tk)
			}
		}
		if len(labelled) < 4 || len(labelled) > 11 {
			t.Errorf("%v: %d labelled ticks, want 4 to 11", r, len(labelled))
		}
		for i, tk := range labelled {
			v, err := strconv.ParseFloat(tk.Label, 64)
			if err != nil || math.Abs(v-tk.Value) > 1e-9*math.Max(1, math.Abs(tk.Value)) || strings.HasPrefix(tk.Label, "-0") {
				t.Errorf("%v: tick at %v labelled %q", r, tk.Value, tk.Label)
			}
			if i > 0 && len(tk.Label) != len(labelled[0].Label) && math.Abs(tk.Value) < 10 && math.Abs(labelled[0].Value) < 10 {
				t.Errorf("%v: labels %q and %q with different digits", r, labelled[0].Label, tk.Label)
			}
		}
	}
	if got := (linearTicks{}).Ticks(1, 1); got != nil {
		t.Errorf("an empty axis has ticks %v", got)
	}
}

// TestScaleLimit checks the limit's words and that the y axis holds the limit and every seed.
func TestScaleLimit(t *testing.T) {
	if got := (Limit{Value: 1.05}).Passes(); got != "passes ≤ 1.05" {
		t.Errorf("at most: %q", got)
	}
	if got := (Limit{Value: 1.5, AtLeast: true}).Passes(); got != "passes ≥ 1.5" {
		t.Errorf("at least: %q", got)
	}
	pts := []ScalePoint{{Ratio: 0.99, Low: 0.98, High: 1.0}, {Ratio: 1.07, Low: 1.06, High: 1.075}}
	for _, limit := range []float64{1.02, 1.2, 0.5} {
		lo, hi := scaleYRange(pts, limit)
		if lo >= math.Min(limit, 0.98) || hi <= math.Max(limit, 1.075) {
			t.Errorf("limit %v: y from %v to %v", limit, lo, hi)
		}
	}
}

// TestColumnEdge checks where a heat map marks a length: after the last column it covers.
func TestColumnEdge(t *testing.T) {
	lengths := []int{64, 128, 256, 512, 1024}
	for _, tc := range []struct {
		n    int
		want float64
		ok   bool
	}{{64, 0.5, true}, {256, 2.5, true}, {300, 2.5, true}, {4096, 4.5, true}, {32, 0, false}} {
		got, ok := columnEdge(lengths, tc.n)
		if ok != tc.ok || (ok && got != tc.want) {
			t.Errorf("%d: %v %v, want %v %v", tc.n, got, ok, tc.want, tc.ok)
		}
	}
}

// TestByFamilySharesYRange checks the layout of a comparison figure: every panel has the one y
// range, which holds every series and the reference whole, so that a level reads the same in
// every panel; every axis is titled; and each legend fits its column, however long a label.
func TestByFamilySharesYRange(t *testing.T) {
	xs := []float64{64, 128, 256, 512, 1024}
	line := func(label string, ys ...float64) Line {
		l := Line{Label: label}
		for i, y := range ys {
			l.XYs = append(l.XYs, struct{ X, Y float64 }{xs[i], y})
		}
		return l
	}
	f := ByFamily{XLabel: "evaluation length (tokens, log scale)", YLabel: "perplexity (log scale)", LogY: true, TrainLen: 64, Reference: 0, Lines: []Line{
		line("rope", 6.5, 7, 12, 18, 23),
		line("alibi", 7.57, 7.5, 7.46, 7.48, 7.49),
		line("kerple", 7.0, 6.9, 6.95, 7.0, 7.1),
		line("sinusoidal", 11, 27, 47, 60, 70),
		line("nope with a label far longer than any legend column would hold by default", 11.5, 12, 13, 14, 15),
	}}
	for _, key := range []string{"rope", "alibi", "kerple", "sinusoidal", "nope"} {
		f.Styles = append(f.Styles, SchemeStyle(key))
	}
	f.Families[RoPE], f.Families[Bias], f.Families[Absolute] = []int{0}, []int{1, 2}, []int{3, 4}
	fig, ok, err := f.grid()
	if err != nil || !ok {
		t.Fatalf("grid: %v %v", ok, err)
	}
	if len(fig.Plots) != 3 {
		t.Fatalf("%d panels, want 3", len(fig.Plots))
	}
	first := fig.Plots[0].Y
	for k, p := range fig.Plots {
		if p.Y.Min != first.Min || p.Y.Max != first.Max {
			t.Errorf("panel %d: y from %v to %v, panel 0 from %v to %v", k, p.Y.Min, p.Y.Max, first.Min, first.Max)
		}
		if p.Y.Label.Text != f.YLabel {
			t.Errorf("panel %d: y axis titled %q", k, p.Y.Label.Text)
		}
		if w := legendWidth(fig.Legends[k]); w > fig.LegendWidth {
			t.Errorf("panel %d: legend %v wide in a column of %v", k, w, fig.LegendWidth)
		}
	}
	if fig.XLabel != f.XLabel {
		t.Errorf("x axes titled %q", fig.XLabel)
	}
	for _, l := range f.Lines {
		for _, xy := range l.XYs {
			if xy.Y < first.Min || xy.Y > first.Max {
				t.Errorf("%s: %v outside the shared range %v to %v", l.Label, xy.Y, first.Min, first.Max)
			}
		}
	}
	// Every panel is drawn and the legends' columns fit in the figure's width.
	if min := vg.Length(fig.Cols) * fig.LegendWidth; fig.Width <= min {
		t.Errorf("figure %v wide for legends of %v", fig.Width, min)
	}
}

// TestDodge checks that lines of a panel which coincide are drawn apart, each within a few
// percent of its lengths.
func TestDodge(t *testing.T) {
	l := Line{XYs: plotter.XYs{{X: 64, Y: 0}, {X: 128, Y: 0}}}
	a, b := dodge(l, 0, 3), dodge(l, 2, 3)
	if mid := dodge(l, 1, 3); mid.XYs[0] != l.XYs[0] {
		t.Errorf("the middle line moved to %v", mid.XYs[0])
	}
	for j := range l.XYs {
		if a.XYs[j].X == b.XYs[j].X || a.XYs[j].Y != 0 || b.XYs[j].Y != 0 {
			t.Errorf("point %d: %v and %v", j, a.XYs[j], b.XYs[j])
		}
		if r := b.XYs[j].X / a.XYs[j].X; r > 1.15 {
			t.Errorf("point %d: moved apart by a factor %v", j, r)
		}
	}
	if l.XYs[0].X != 64 {
		t.Error("dodge moved the caller's points")
	}
	// Forty-two lines, a task comparison's panel, stay within ±maxDodge octaves.
	if lo, hi := dodge(l, 0, 42).XYs[0].X, dodge(l, 41, 42).XYs[0].X; math.Log2(hi/lo) > 2*maxDodge+1e-9 {
		t.Errorf("42 lines spread over %v octaves", math.Log2(hi/lo))
	}
}

// TestByFamilyTallLegend checks that a panel with many series (a task comparison has one per
// scheme and task) gets a row tall enough for its legend, which would otherwise run into the
// next row.
func TestByFamilyTallLegend(t *testing.T) {
	f := ByFamily{TrainLen: 64, Reference: -1}
	for i := range 42 {
		f.Lines = append(f.Lines, Line{Label: "series " + strconv.Itoa(i), XYs: plotter.XYs{{X: 64, Y: float64(i)}, {X: 128, Y: 1}}})
		f.Styles = append(f.Styles, SchemeStyle("alibi"))
		f.Families[Absolute+Family(i%4)] = append(f.Families[Absolute+Family(i%4)], i)
	}
	fig, _, err := f.grid()
	if err != nil {
		t.Fatal(err)
	}
	rows := (len(fig.Plots) + fig.Cols - 1) / fig.Cols
	for k, l := range fig.Legends {
		if h := legendHeight(l); h+0.6*vg.Inch > (fig.Height-0.9*vg.Inch)/vg.Length(rows) {
			t.Errorf("panel %d: legend %v tall in a figure %v tall of %d rows", k, h, fig.Height, rows)
		}
	}
}
