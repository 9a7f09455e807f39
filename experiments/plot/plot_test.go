package plot

import (
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	gonum "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
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
		{"mix", "mix+window", "mix+window+sinks", "nope+logn", "rope+logn", "nope+logn_train", "rope+logn_train", "nope+ssmax", "rope+ssmax"},
		{"fox", "cope", "stickbreaking"},
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

// TestSchemeColoursApart checks that no two schemes drawn together have colours a reader
// confuses: within a family (a panel of a comparison's figures), among the schemes the passkey,
// task and scale comparisons draw in one panel, and against the reference's grey, every two
// colours differ by a CIE76 ΔE of at least 35; each colour for a scheme outside the table is at
// least 30 from the table's, the grey and the other such colours. (The task figure's T5 orange
// and YaRN vermillion differed by 33 and read as one orange.)
func TestSchemeColoursApart(t *testing.T) {
	groups := map[string][]string{
		"absolute":     {"nope", "learned", "sinusoidal"},
		"rope":         {"rope+linear", "rope+ntk", "rope+dynamic_ntk", "rope+yarn", "rope+llama3", "rope+partial", "rope+p", "xpos"},
		"biases":       {"alibi", "t5", "kerple", "fire"},
		"temperatures": {"mix", "mix+window", "mix+window+sinks", "nope+logn", "rope+logn", "nope+logn_train", "rope+logn_train", "nope+ssmax", "rope+ssmax"},
		"content":      {"fox", "cope", "stickbreaking"},
		"together":     {"nope", "learned", "sinusoidal", "rope+yarn", "rope+linear", "alibi", "t5", "kerple", "fire", "fox", "cope", "stickbreaking"},
	}
	for name, keys := range groups {
		colors := []color.Color{ReferenceStyle.Color}
		for _, k := range keys {
			colors = append(colors, SchemeStyle(k).Color)
		}
		labels := append([]string{"rope"}, keys...)
		for i := range colors {
			for j := i + 1; j < len(colors); j++ {
				if d := deltaE(colors[i], colors[j]); d < 35 {
					t.Errorf("%s: %s and %s differ by ΔE %.1f", name, labels[i], labels[j], d)
				}
			}
		}
	}
	table := []color.Color{ReferenceStyle.Color}
	for _, s := range schemeStyles {
		table = append(table, s.c)
	}
	for i, c := range fallbackColors {
		for _, other := range append(slices.Clone(table), fallbackColors[:i]...) {
			if d := deltaE(c, other); d < 30 {
				t.Errorf("fallback %v and %v differ by ΔE %.1f", c, other, d)
			}
		}
	}
	if d := deltaE(color.RGBA{230, 159, 0, 255}, color.RGBA{213, 94, 0, 255}); d > 35 {
		t.Errorf("ΔE of orange and vermillion %.1f, want about 33: the measure is off", d)
	}
}

// deltaE is the CIE76 colour difference of two colours: their distance in CIELAB, sRGB under
// D65.
func deltaE(a, b color.Color) float64 {
	la, lb := cieLab(a), cieLab(b)
	return math.Sqrt((la[0]-lb[0])*(la[0]-lb[0]) + (la[1]-lb[1])*(la[1]-lb[1]) + (la[2]-lb[2])*(la[2]-lb[2]))
}

func cieLab(c color.Color) [3]float64 {
	r, g, b, _ := c.RGBA()
	lin := func(v uint32) float64 {
		u := float64(v) / 0xffff
		if u <= 0.04045 {
			return u / 12.92
		}
		return math.Pow((u+0.055)/1.055, 2.4)
	}
	R, G, B := lin(r), lin(g), lin(b)
	x := (0.4124*R + 0.3576*G + 0.1805*B) / 0.95047
	y := 0.2126*R + 0.7152*G + 0.0722*B
	z := (0.0193*R + 0.1192*G + 0.9505*B) / 1.08883
	f := func(t float64) float64 {
		if t > 0.008856 {
			return math.Cbrt(t)
		}
		return 7.787*t + 16.0/116
	}
	return [3]float64{116*f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z))}
}

// TestLegendSide checks that a single plot's legend column holds its widest entry, so that a
// label such as "rope_pi (fine-tuned at 256) (not learned at 1x)" is not cut at the image's
// edge, and stays 3 inches for short ones.
func TestLegendSide(t *testing.T) {
	short, long := gonum.NewLegend(), gonum.NewLegend()
	short.Add("rope", &plotter.Line{})
	long.Add("rope_pi (fine-tuned at 256) (not learned at 1x) and a further long explanation", &plotter.Line{})
	if got := legendSide(&short); got != 3*vg.Inch {
		t.Errorf("short legend: %v, want 3 inches", got)
	}
	if got, w := legendSide(&long), legendWidth(&long); got < w+0.15*vg.Inch || w < 3*vg.Inch {
		t.Errorf("long legend %v wide in a column of %v", w, got)
	}
}
