package plot

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/plot/plotter"
)

// TestMultiplesLegendNamesEveryPanel checks that the legend beside a row names a line drawn in
// only one of the row's panels, not just the last panel's lines, and each label once.
func TestMultiplesLegendNamesEveryPanel(t *testing.T) {
	xy := plotter.XYs{{X: 1, Y: 0.5}, {X: 4, Y: 0.2}}
	f := Multiples{Title: "t", Cols: 3, Panels: []Panel{
		{Title: "first", Lines: []Line{{Label: "shared", XYs: xy}, {Label: "onlyfirst", XYs: xy}}, Styles: []Style{SchemeStyle("rope"), SchemeStyle("fox")}, Mark: 2, MarkLabel: "edge"},
		{Title: "second", Lines: []Line{{Label: "shared", XYs: xy}}, Styles: []Style{SchemeStyle("rope")}, Mark: 2, MarkLabel: "edge"},
	}}
	dir := t.TempDir()
	svg := filepath.Join(dir, "m.svg")
	if err := f.Save(filepath.Join(dir, "m.png"), svg); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(svg)
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	for label, want := range map[string]int{">onlyfirst<": 1, ">shared<": 1, ">edge<": 1} {
		if got := strings.Count(text, label); got != want {
			t.Errorf("the legend has %s %d times, want %d", label, got, want)
		}
	}
}
