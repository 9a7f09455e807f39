package plot

import (
	"math"
	"strconv"
	"strings"
	"testing"

	gonum "gonum.org/v1/plot"
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

// TestPanelYRange checks the y range of a panel: a flat family's few percent fill it when the
// reference would squash them, the reference's cut; a reference that would not is kept whole.
func TestPanelYRange(t *testing.T) {
	xs := []float64{64, 128, 256, 512, 1024}
	line := func(ys ...float64) Line {
		var l Line
		for i, y := range ys {
			l.XYs = append(l.XYs, struct{ X, Y float64 }{xs[i], y})
		}
		return l
	}
	f := ByFamily{LogY: true, TrainLen: 64, Reference: 0, Lines: []Line{
		line(6.5, 7, 12, 18, 23),          // the reference, RoPE
		line(7.57, 7.5, 7.46, 7.48, 7.49), // ALiBi, flat
		line(7.0, 6.9, 6.95, 7.0, 7.1),    // KERPLE
		line(11, 27, 47, 60, 70),          // sinusoidal
		line(11.5, 12, 13, 14, 15),        // NoPE
	}}
	bias := f.panelYRange([]int{1, 2})
	if bias.Max > 9 || bias.Min < 6 || bias.Max/bias.Min > 1.4 {
		t.Errorf("biases: y from %v to %v, want about 6.3 to 8.3 (a factor of 1.2 padded)", bias.Min, bias.Max)
	}
	if !leaves(f.Lines[0], bias) {
		t.Error("the reference is not cut in the biases' panel")
	}
	abs := f.panelYRange([]int{3, 4})
	if abs.Min > 6.5 || abs.Max < 70 || leaves(f.Lines[0], abs) {
		t.Errorf("absolute: y from %v to %v, want the reference whole", abs.Min, abs.Max)
	}
}
