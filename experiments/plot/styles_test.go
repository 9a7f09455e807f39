package plot

import (
	"fmt"
	"image/color"
	"slices"
	"testing"

	"extrapolate/position"
)

// builtinLooks are the styles of every key a committed figure draws, and of every key of the
// table, as they were before a scheme of one's own was drawn from what it is (OwnStyle): the
// repository's schemes, their settings the table does not name (dash-dotted) and their
// fine-tuned runs must keep them, so that no committed figure changes.
var builtinLooks = map[string]string{
	"alibi":                 "{0 114 178 255} [] draw.CircleGlyph 1.8",
	"alibi+ft":              "{0 114 178 255} [6 3] draw.CircleGlyph 1.8",
	"alibi+gated":           "{34 136 17 255} [6 2 1 2] draw.BoxGlyph 1.8",
	"cope":                  "{165 225 15 255} [] draw.CircleGlyph 1.8",
	"fire":                  "{136 85 255 255} [] draw.CrossGlyph 1.8",
	"fox":                   "{0 0 120 255} [] draw.TriangleGlyph 1.8",
	"hard_alibi":            "{0 204 0 255} [6 2 1 2] draw.TriangleGlyph 1.8",
	"kerple":                "{0 158 115 255} [] draw.BoxGlyph 1.8",
	"learned":               "{153 153 51 255} [] draw.SquareGlyph 1.8",
	"mix":                   "{230 159 0 255} [] draw.RingGlyph 1.8",
	"mix+window":            "{228 26 28 255} [] draw.SquareGlyph 1.8",
	"mix+window+sinks":      "{136 85 255 255} [] draw.PlusGlyph 1.8",
	"nope":                  "{0 0 0 255} [] draw.RingGlyph 1.8",
	"nope+gated":            "{0 0 255 255} [6 2 1 2] draw.CrossGlyph 1.8",
	"nope+logn":             "{51 34 136 255} [] draw.SquareGlyph 1.8",
	"nope+logn_train":       "{86 180 233 255} [] draw.TriangleGlyph 1.8",
	"nope+ssmax":            "{153 153 51 255} [] draw.BoxGlyph 1.8",
	"rope":                  "{150} [] <nil> 1.2",
	"rope+drope":            "{255 0 221 255} [6 2 1 2] draw.CircleGlyph 1.8",
	"rope+dual_chunk":       "{0 85 85 255} [6 2 1 2] draw.CrossGlyph 1.8",
	"rope+dynamic_ntk":      "{204 102 119 255} [] draw.BoxGlyph 1.8",
	"rope+dynamic_ntk+ft":   "{204 102 119 255} [6 3] draw.BoxGlyph 1.8",
	"rope+ft":               "{150} [6 3] draw.RingGlyph 1.8",
	"rope+gated":            "{0 204 0 255} [6 2 1 2] draw.CrossGlyph 1.8",
	"rope+leaky_rerope":     "{34 136 17 255} [6 2 1 2] draw.TriangleGlyph 1.8",
	"rope+linear":           "{140 81 10 255} [] draw.CrossGlyph 1.8",
	"rope+linear+ft":        "{140 81 10 255} [6 3] draw.CrossGlyph 1.8",
	"rope+llama3":           "{153 153 51 255} [] draw.RingGlyph 1.8",
	"rope+llama3+ft":        "{153 153 51 255} [6 3] draw.RingGlyph 1.8",
	"rope+lm_infinite":      "{0 204 0 255} [6 2 1 2] draw.TriangleGlyph 1.8",
	"rope+logn":             "{102 51 0 255} [] draw.TriangleGlyph 1.8",
	"rope+logn+ft":          "{102 51 0 255} [6 3] draw.TriangleGlyph 1.8",
	"rope+logn_train":       "{0 158 115 255} [] draw.PyramidGlyph 1.8",
	"rope+ntk":              "{51 34 136 255} [] draw.CircleGlyph 1.8",
	"rope+ntk+ft":           "{51 34 136 255} [6 3] draw.CircleGlyph 1.8",
	"rope+p":                "{170 68 153 255} [] draw.PlusGlyph 1.8",
	"rope+partial":          "{86 180 233 255} [] draw.SquareGlyph 1.8",
	"rope+pose":             "{34 68 0 255} [6 2 1 2] draw.PlusGlyph 1.8",
	"rope+randomized":       "{255 0 136 255} [6 2 1 2] draw.SquareGlyph 1.8",
	"rope+rerope":           "{255 0 136 255} [6 2 1 2] draw.CircleGlyph 1.8",
	"rope+self_extend":      "{238 170 119 255} [6 2 1 2] draw.CircleGlyph 1.8",
	"rope+sinks":            "{0 0 255 255} [6 2 1 2] draw.TriangleGlyph 1.8",
	"rope+softpick":         "{238 170 119 255} [6 2 1 2] draw.PyramidGlyph 1.8",
	"rope+ssmax":            "{136 34 85 255} [] draw.PlusGlyph 1.8",
	"rope+streaming":        "{0 85 85 255} [6 2 1 2] draw.PyramidGlyph 1.8",
	"rope+string":           "{170 153 255 255} [6 2 1 2] draw.BoxGlyph 1.8",
	"rope+window":           "{255 0 136 255} [6 2 1 2] draw.PlusGlyph 1.8",
	"rope+yarn":             "{228 26 28 255} [] draw.PyramidGlyph 1.8",
	"rope+yarn+ft":          "{228 26 28 255} [6 3] draw.PyramidGlyph 1.8",
	"rope+yarn+self_extend": "{255 0 221 255} [6 2 1 2] draw.CrossGlyph 1.8",
	"sinusoidal":            "{136 34 85 255} [] draw.TriangleGlyph 1.8",
	"stickbreaking":         "{0 195 225 255} [] draw.SquareGlyph 1.8",
	"t5":                    "{230 159 0 255} [] draw.TriangleGlyph 1.8",
	"xpos":                  "{0 0 0 255} [] draw.TriangleGlyph 1.8",
}

// TestBuiltinStylesUnchanged checks every key of builtinLooks against SchemeStyle, and that the
// table has no key the list lacks.
func TestBuiltinStylesUnchanged(t *testing.T) {
	for key, want := range builtinLooks {
		if got := look(SchemeStyle(key)); got != want {
			t.Errorf("%s: drawn %s, was %s", key, got, want)
		}
	}
	for key := range schemeStyles {
		if _, ok := builtinLooks[key]; !ok {
			t.Errorf("%s: in the table, not in builtinLooks: add its look", key)
		}
	}
}

// TestOwnStyle checks the style of a scheme of one's own: without a look of its own, a solid
// line in a colour no table entry has and a marker none of its family's entries has, the same
// each time, dashed when fine-tuned; with one, its colour and marker.
func TestOwnStyle(t *testing.T) {
	tableColors := map[string]bool{fmt.Sprint(ReferenceStyle.Color): true}
	for _, s := range schemeStyles {
		tableColors[fmt.Sprint(s.c)] = true
	}
	checked := 0
	for f := Family(0); f < NumFamilies; f++ {
		taken := map[string]bool{}
		for _, s := range schemeStyles {
			if s.fam == f {
				taken[fmt.Sprintf("%T", s.shape)] = true
			}
		}
		full := len(taken) == len(fallbackShapes)
		for i := range 50 {
			key := fmt.Sprintf("mine%d", i)
			s := OwnStyle(key, f, nil, "")
			if s.Dashes != nil || s.Shape == nil || tableColors[fmt.Sprint(s.Color)] {
				t.Errorf("%s in %s: %+v, want a solid line with a marker, in a colour the table does not have", key, f.Title(), s)
			}
			if !full && taken[fmt.Sprintf("%T", s.Shape)] {
				t.Errorf("%s in %s: the marker %T of a scheme of its family", key, f.Title(), s.Shape)
			}
			if !Same(s, OwnStyle(key, f, nil, "")) {
				t.Errorf("%s: drawn differently twice", key)
			}
			ft := OwnStyle(key+"+"+FineTuned, f, nil, "")
			if ft.Color != s.Color || ft.Shape != s.Shape || ft.Dashes == nil {
				t.Errorf("%s fine-tuned: %+v, want its colour and marker, dashed", key, ft)
			}
			checked++
		}
	}
	if checked == 0 {
		t.Fatal("no family checked")
	}
	if !slices.Equal(shapeNames, position.Markers) {
		t.Errorf("the markers by name: %v here, %v in position.Markers", shapeNames, position.Markers)
	}
	mine := color.RGBA{10, 20, 30, 255}
	for i, name := range shapeNames {
		s := OwnStyle("mine", Bias, mine, name)
		if s.Color != mine || s.Shape != fallbackShapes[i] || s.Dashes != nil {
			t.Errorf("asked for %v and %s: %+v", mine, name, s)
		}
	}
	if s := OwnStyle("mine", Bias, mine, ""); s.Color != mine || s.Shape == nil {
		t.Errorf("asked for a colour alone: %+v, want it with a marker of the family's", s)
	}
}
