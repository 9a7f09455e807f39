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

// TestSchemeStyles checks the scheme table: no two schemes drawn alike, no two of a family (a
// panel) in one colour, none like the reference; a fine-tuned run in its scheme's colour and
// marker, dashed; and a scheme outside the table never drawn like one in it, the same each time.
func TestSchemeStyles(t *testing.T) {
	families := [][]string{
		{"nope", "learned", "sinusoidal"},
		{"rope+linear", "rope+ntk", "rope+dynamic_ntk", "rope+yarn", "rope+llama3", "rope+partial", "rope+p", "xpos"},
		{"alibi", "t5", "kerple", "fire"},
		{"mix", "nope+logn", "rope+logn", "nope+logn_train", "rope+logn_train", "nope+ssmax", "rope+ssmax"},
	}
	looks := map[string]string{}
	n := 0
	for _, fam := range families {
		colors := map[string]string{}
		for _, key := range fam {
			n++
			s := SchemeStyle(key)
			if _, ok := schemeStyles[key]; !ok || s.Shape == nil || s.Dashes != nil {
				t.Errorf("%s: not a solid line with a marker from the table: %+v", key, s)
			}
			look := fmt.Sprintf("%v %T", s.Color, s.Shape)
			if other, ok := looks[look]; ok {
				t.Errorf("%s is drawn like %s", key, other)
			}
			looks[look] = key
			if other, ok := colors[fmt.Sprint(s.Color)]; ok {
				t.Errorf("%s has the colour of %s, in its family", key, other)
			}
			colors[fmt.Sprint(s.Color)] = key
			if fmt.Sprint(s.Color) == fmt.Sprint(ReferenceStyle.Color) {
				t.Errorf("%s has the reference's colour", key)
			}
			ft := SchemeStyle(key + "+ft")
			if ft.Color != s.Color || ft.Shape != s.Shape || ft.Dashes == nil {
				t.Errorf("%s fine-tuned: %+v, want its colour and marker, dashed", key, ft)
			}
		}
	}
	// The schemes the passkey, task and scale comparisons draw in one panel.
	together := map[string]string{fmt.Sprint(ReferenceStyle.Color): "rope"}
	for _, key := range []string{"nope", "learned", "sinusoidal", "rope+yarn", "rope+linear", "alibi", "t5", "kerple", "fire"} {
		c := fmt.Sprint(SchemeStyle(key).Color)
		if other, ok := together[c]; ok {
			t.Errorf("%s has the colour of %s", key, other)
		}
		together[c] = key
	}
	if n != len(schemeStyles) {
		t.Errorf("the test knows %d schemes, the table %d", n, len(schemeStyles))
	}
	if !Same(SchemeStyle("rope"), ReferenceStyle) {
		t.Errorf("rope: %+v, want the reference's", SchemeStyle("rope"))
	}
	tableColors := map[string]bool{fmt.Sprint(ReferenceStyle.Color): true}
	for _, s := range schemeStyles {
		tableColors[fmt.Sprint(s.c)] = true
	}
	for i := range 200 {
		key := fmt.Sprintf("user%d+scaling%d", i, i%7)
		for _, k := range []string{key, key + "+ft"} {
			s := SchemeStyle(k)
			if tableColors[fmt.Sprint(s.Color)] || s.Dashes == nil {
				t.Errorf("%s: %+v, a table colour or a solid line", k, s)
			}
			if !Same(s, SchemeStyle(k)) {
				t.Errorf("%s: drawn differently twice", k)
			}
		}
	}
}

// TestVariant checks that a scheme's further series keep its colour and marker, each drawn
// unlike every other, however many there are (the callers loop until one is free).
func TestVariant(t *testing.T) {
	base := SchemeStyle("alibi")
	seen := []Style{base, SchemeStyle("alibi+ft")}
	for k := 1; k <= 40; k++ {
		v := Variant(base, k)
		if v.Color != base.Color || v.Shape != base.Shape {
			t.Errorf("variant %d: %+v, want alibi's colour and marker", k, v)
		}
		for _, s := range seen {
			if Same(s, v) {
				t.Errorf("variant %d drawn like %+v", k, s)
			}
		}
		seen = append(seen, v)
	}
	// The first round of dash patterns keeps the base's width, whatever it is.
	thin := base
	thin.Width = base.Width / 2
	for k := 1; k <= len(variantDashes); k++ {
		if v := Variant(thin, k); v.Width != thin.Width {
			t.Errorf("variant %d of a %v-wide line is %v wide", k, thin.Width, v.Width)
		}
	}
}
