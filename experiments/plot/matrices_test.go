package plot

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMatrices checks a heat-map figure: each panel's sizes' axis titled as given, its rows
// named top to bottom in the order given, every cell numbered in percent and "n/a" where a row
// has no score, and the figure written.
func TestMatrices(t *testing.T) {
	m := Matrix{Title: "copy", XLabel: "size (letters)", Rows: []string{"nope", "learned", "rope"}, Sizes: []int{8, 16, 32},
		Values: [][]float64{{0.66, 0.02, 0}, {1, 0.984, math.NaN()}, {1, 1, 0}}, Mark: 16}
	f := Matrices{Title: "tasks", Cols: 3, Panels: []Matrix{m, m}}
	fig, ok, err := f.grid()
	if err != nil || !ok {
		t.Fatalf("grid: %v %v", ok, err)
	}
	for k, p := range fig.Plots {
		if p.X.Label.Text != "size (letters)" {
			t.Errorf("panel %d: x axis titled %q", k, p.X.Label.Text)
		}
		var rows []string
		for _, tk := range p.Y.Tick.Marker.Ticks(p.Y.Min, p.Y.Max) {
			rows = append([]string{tk.Label}, rows...) // ticks count from the bottom
		}
		if strings.Join(rows, ",") != "nope,learned,rope" {
			t.Errorf("panel %d: rows top to bottom %v", k, rows)
		}
	}
	for v, want := range map[float64]string{0.984: "98", 0: "0", 1: "100", 0.005: "1", math.NaN(): "n/a"} {
		if got := percent(v); got != want {
			t.Errorf("percent(%v) = %q, want %q", v, got, want)
		}
	}
	dir := t.TempDir()
	svg := filepath.Join(dir, "m.svg")
	if err := f.Save(filepath.Join(dir, "m.png"), svg); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(svg)
	if err != nil {
		t.Fatal(err)
	}
	for label, want := range map[string]int{">n/a<": 2, ">98<": 2, ">size (letters)<": 2} {
		if got := strings.Count(string(b), label); got != want {
			t.Errorf("the figure has %s %d times, want %d", label, got, want)
		}
	}
	if err := (Matrices{}).Save(filepath.Join(dir, "e.png"), filepath.Join(dir, "e.svg")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "e.png")); err == nil {
		t.Error("a figure with no panel")
	}
}
