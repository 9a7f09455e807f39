package plot

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// TestPerplexityDegenerate draws plots gonum/plot would panic on: no curve at all, and a spread
// larger than the mean on a log axis.
func TestPerplexityDegenerate(t *testing.T) {
	dir := t.TempDir()
	if err := Perplexity(dir, "p.png", "p.svg", "empty", 64, []Curve{{Label: "learned", NotApplicable: []int{128}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "p.png")); err == nil {
		t.Fatal("a plot with nothing to draw")
	}
	wide := Curve{Label: "sinusoidal", Lengths: []int{64, 128}, Mean: []float64{10, 20}, Std: []float64{30, 45}}
	if err := Perplexity(dir, "p.png", "p.svg", "wide", 64, []Curve{wide}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "p.png")); err != nil {
		t.Fatal(err)
	}
}

// TestSeriesStylesDistinct checks that up to 21 series are drawn distinctly, the first twenty in
// colours of their own, none like the reference.
func TestSeriesStylesDistinct(t *testing.T) {
	looks, colors := map[string]int{}, map[string]int{}
	for i := range 21 {
		s := SeriesStyle(i)
		look := fmt.Sprint(s.Color, s.Dashes)
		if j, ok := looks[look]; ok {
			t.Errorf("series %d is drawn like series %d", i, j)
		}
		looks[look] = i
		if j, ok := colors[fmt.Sprint(s.Color)]; ok && i < 20 {
			t.Errorf("series %d has the colour of series %d", i, j)
		}
		colors[fmt.Sprint(s.Color)] = i
		if fmt.Sprint(s.Color) == fmt.Sprint(ReferenceStyle.Color) {
			t.Errorf("series %d has the reference's colour", i)
		}
	}
}
