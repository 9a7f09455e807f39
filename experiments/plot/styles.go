package plot

import (
	"fmt"
	"hash/fnv"
	"image/color"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// A Style is how a series is drawn in every figure of every report, so that a scheme keeps its
// colour and marker from the perplexity figure to the loss-by-position and passkey figures, and
// from one comparison to the next.
type Style struct {
	Color  color.Color
	Dashes []vg.Length
	Shape  draw.GlyphDrawer
	Width  vg.Length
}

// Colours of the scheme table: Okabe and Ito's (less their yellow, faint on white, and their
// vermillion and reddish purple, which beside orange and wine read as the same colour), Paul
// Tol's muted ones, and a red, two browns and a violet, chosen so that any two colours drawn
// together (a family's, the schemes of the passkey, task and scale comparisons) differ by a
// CIE76 ΔE of at least 35 and none looks like the reference's grey. Near colours in different
// families are told apart by their markers.
var (
	black     = color.RGBA{0, 0, 0, 255}
	orange    = color.RGBA{230, 159, 0, 255}
	skyBlue   = color.RGBA{86, 180, 233, 255}
	green     = color.RGBA{0, 158, 115, 255}
	blue      = color.RGBA{0, 114, 178, 255}
	indigo    = color.RGBA{51, 34, 136, 255}
	olive     = color.RGBA{153, 153, 51, 255}
	wine      = color.RGBA{136, 34, 85, 255}
	rose      = color.RGBA{204, 102, 119, 255}
	magenta   = color.RGBA{170, 68, 153, 255}
	red       = color.RGBA{228, 26, 28, 255}
	brown     = color.RGBA{140, 81, 10, 255}
	darkBrown = color.RGBA{102, 51, 0, 255}
	violet    = color.RGBA{136, 85, 255, 255}
	// The content schemes' (FoX, CoPE, stick-breaking), which the passkey and task figures
	// draw beside the schemes above: each at least a ΔE of 40 from those, and 32 from the
	// fallback colours.
	lime = color.RGBA{165, 225, 15, 255}
	cyan = color.RGBA{0, 195, 225, 255}
	navy = color.RGBA{0, 0, 120, 255}
)

// Markers of the scheme table.
var (
	ring     = draw.RingGlyph{}
	square   = draw.SquareGlyph{}
	triangle = draw.TriangleGlyph{}
	cross    = draw.CrossGlyph{}
	plus     = draw.PlusGlyph{}
	circle   = draw.CircleGlyph{}
	box      = draw.BoxGlyph{}
	pyramid  = draw.PyramidGlyph{}
)

// seriesWidth is the width of every scheme's line but the reference's.
var seriesWidth = vg.Points(1.8)

// ReferenceStyle is plain RoPE's, the thin grey line every panel of a comparison compares
// against, and RoPE's wherever it is drawn.
var ReferenceStyle = Style{Color: color.Gray{Y: 150}, Width: vg.Points(1.2)}

// schemeStyles is the one table of the schemes' looks: a scheme, keyed as SchemeKey words it
// (the scheme, then its variant, scaling and temperature joined by "+"), is drawn in its colour
// and marker in every figure of every report. Within a family of schemes (a panel of a
// comparison's figures) no two share a colour, nor do the schemes the passkey, task and scale
// comparisons draw together (nope, learned, sinusoidal, RoPE, YaRN, PI, ALiBi, T5, KERPLE,
// FIRE); across families a colour comes back with another marker. It holds the repository's
// own schemes: one registered from another package is drawn from what it is (OwnStyle). Every
// line is solid: dashes mean a fine-tuned run (FineTuned) or a second series of a scheme in one
// report (Variant), and dash-dots a setting of a built-in scheme the table does not name (a
// distance map, a gate, Hard-ALiBi).
var schemeStyles = map[string]struct {
	c     color.Color
	shape draw.GlyphDrawer
	fam   Family // the panel it is drawn in, for the markers a scheme of one's own takes there
}{
	// absolute positions
	"nope":       {black, ring, Absolute},
	"learned":    {olive, square, Absolute},
	"sinusoidal": {wine, triangle, Absolute},
	// RoPE and its scalings; plain RoPE is the reference (ReferenceStyle)
	"rope+linear":      {brown, cross, RoPE},
	"rope+ntk":         {indigo, circle, RoPE},
	"rope+dynamic_ntk": {rose, box, RoPE},
	"rope+yarn":        {red, pyramid, RoPE},
	"rope+llama3":      {olive, ring, RoPE},
	"rope+partial":     {skyBlue, square, RoPE},
	"rope+p":           {magenta, plus, RoPE},
	"xpos":             {black, triangle, RoPE},
	// attention biases
	"alibi":  {blue, circle, Bias},
	"t5":     {orange, triangle, Bias},
	"kerple": {green, box, Bias},
	"fire":   {violet, cross, Bias},
	// positions from the content
	"fox":           {navy, triangle, Content},
	"cope":          {lime, circle, Content},
	"stickbreaking": {cyan, square, Content},
	// temperatures and mixes
	"mix":              {orange, ring, Temperature},
	"mix+window":       {red, square, Temperature},
	"mix+window+sinks": {violet, plus, Temperature},
	"nope+logn":        {indigo, square, Temperature},
	"rope+logn":        {darkBrown, triangle, Temperature},
	"nope+logn_train":  {skyBlue, triangle, Temperature},
	"rope+logn_train":  {green, pyramid, Temperature},
	"nope+ssmax":       {olive, box, Temperature},
	"rope+ssmax":       {wine, plus, Temperature},
}

// fallbackColors colour the schemes the table does not know (a scheme registered outside this
// repository, a setting of a built-in one it does not name): vivid colours, each at least a CIE76 ΔE of 30 from every colour of the table, the
// reference's grey and each other, so that such a scheme is never drawn like one of the table's
// nor mistaken for one (tab10's blue, which these replace, was the table's blue to the eye).
var fallbackColors = []color.Color{
	color.RGBA{0, 204, 0, 255}, color.RGBA{255, 0, 221, 255}, color.RGBA{255, 0, 136, 255},
	color.RGBA{34, 68, 0, 255}, color.RGBA{0, 0, 255, 255}, color.RGBA{170, 153, 255, 255},
	color.RGBA{34, 136, 17, 255}, color.RGBA{0, 85, 85, 255}, color.RGBA{238, 170, 119, 255},
}

// fallbackShapes are the markers a scheme outside the table may take, by the names a scheme of
// one's own asks for them (position.Markers).
var (
	fallbackShapes = []draw.GlyphDrawer{ring, square, triangle, cross, plus, circle, box, pyramid}
	shapeNames     = []string{"ring", "square", "triangle", "cross", "plus", "circle", "box", "pyramid"}
)

// Dash patterns: a fine-tuned run's, a scheme outside the table's (dash-dot), and a second,
// third... series of one scheme in a report's.
var (
	fineTunedDashes = []vg.Length{vg.Points(6), vg.Points(3)}
	fallbackDashes  = []vg.Length{vg.Points(6), vg.Points(2), vg.Points(1), vg.Points(2)}
	variantDashes   = [][]vg.Length{
		{vg.Points(2), vg.Points(2)},
		{vg.Points(10), vg.Points(2), vg.Points(2), vg.Points(2)},
		{vg.Points(1), vg.Points(1)},
		{vg.Points(8), vg.Points(4)},
		{vg.Points(10), vg.Points(2), vg.Points(2), vg.Points(2), vg.Points(2), vg.Points(2)},
	}
)

// FineTuned is the last word of a scheme key of a run fine-tuned at a longer length.
const FineTuned = "ft"

// SchemeStyle is the style of a series of the scheme key in every figure: the table's
// (schemeStyles), "rope" the reference's. A fine-tuned run's key (ending in "+ft") takes its
// scheme's colour and marker, dashed. A key not in the table (a setting of a built-in scheme the
// table does not name) takes a colour no table entry has, a marker and dash-dots, all chosen by
// a hash of its key, so the same in every figure.
func SchemeStyle(key string) Style {
	if key == "rope" {
		return ReferenceStyle
	}
	if s, ok := schemeStyles[key]; ok {
		return Style{Color: s.c, Shape: s.shape, Width: seriesWidth}
	}
	if base, ok := strings.CutSuffix(key, "+"+FineTuned); ok {
		s := SchemeStyle(base)
		if s.Shape == nil { // plain RoPE fine-tuned: the reference's grey with RoPE's marker
			s = Style{Color: s.Color, Shape: ring, Width: seriesWidth}
		}
		if s.Dashes == nil {
			s.Dashes = fineTunedDashes
		} else {
			s.Dashes = append(append([]vg.Length{}, s.Dashes...), s.Dashes...)
			s.Dashes[0] *= 2
		}
		return s
	}
	n := hash(key)
	return Style{
		Color:  fallbackColors[n%uint32(len(fallbackColors))],
		Shape:  fallbackShapes[(n/uint32(len(fallbackColors)))%uint32(len(fallbackShapes))],
		Dashes: fallbackDashes,
		Width:  seriesWidth,
	}
}

// OwnStyle is the style of a scheme registered outside the repository's position package, keyed
// as SchemeKey words it, in family f, in every figure: a solid line, drawn like the table's
// schemes rather than dash-dotted as a setting the table does not name, in the colour c and the
// marker named marker when the scheme asks for them (position.Drawn), and otherwise in a colour
// no table entry has and a marker none of f's table entries has (all of them where f's take
// every one), each chosen by a hash of the key, so the same in every figure. A fine-tuned run's
// key (ending in "+ft") takes its scheme's style, dashed.
func OwnStyle(key string, f Family, c color.Color, marker string) Style {
	if base, ok := strings.CutSuffix(key, "+"+FineTuned); ok {
		s := OwnStyle(base, f, c, marker)
		s.Dashes = fineTunedDashes
		return s
	}
	n := hash(key)
	if c == nil {
		c = fallbackColors[n%uint32(len(fallbackColors))]
	}
	free := freeShapes(f)
	shape := free[(n/uint32(len(fallbackColors)))%uint32(len(free))]
	if i := slices.Index(shapeNames, marker); i >= 0 {
		shape = fallbackShapes[i]
	}
	return Style{Color: c, Shape: shape, Width: seriesWidth}
}

// freeShapes are the markers none of family f's table entries has, in fallbackShapes' order;
// all of them when f's entries take every one.
func freeShapes(f Family) []draw.GlyphDrawer {
	var free []draw.GlyphDrawer
	for _, g := range fallbackShapes {
		taken := false
		for _, s := range schemeStyles {
			taken = taken || s.fam == f && Same(Style{Shape: s.shape}, Style{Shape: g})
		}
		if !taken {
			free = append(free, g)
		}
	}
	if len(free) == 0 {
		return fallbackShapes
	}
	return free
}

// hash is the FNV-1a hash of a scheme key, which picks the looks of schemes outside the table.
func hash(key string) uint32 {
	h := fnv.New32a()
	h.Write([]byte(key))
	return h.Sum32()
}

// Variant is the style of the k-th further series (k ≥ 1) drawn in style s in one report, such
// as a scheme's runs on another task: its colour and marker, with another dash pattern, and
// once the patterns are used up a thinner line each round, so that no two k draw alike: the
// callers look for the first variant not yet taken, and a scheme may have any number of series
// (a task comparison has one per task, and more).
func Variant(s Style, k int) Style {
	if k <= 0 {
		return s
	}
	s.Dashes = variantDashes[(k-1)%len(variantDashes)]
	if round := (k - 1) / len(variantDashes); round > 0 {
		s.Width = seriesWidth * vg.Length(math.Pow(0.7, float64(round)))
	}
	if s.Shape == nil {
		s.Shape = ring
	}
	return s
}

// Same reports whether two styles draw alike.
func Same(a, b Style) bool {
	return look(a) == look(b)
}

// look writes down how a style draws: its shape by its type, as glyphs are empty structs.
func look(s Style) string {
	return fmt.Sprintf("%v %v %T %v", s.Color, s.Dashes, s.Shape, s.Width)
}

// apply styles a line and, if not nil, its points: only a style with a shape has points.
func (s Style) apply(l *plotter.Line, p *plotter.Scatter) {
	l.Color, l.Width, l.Dashes = s.Color, s.Width, s.Dashes
	if p != nil {
		p.Color, p.Shape = s.Color, s.Shape
	}
}
