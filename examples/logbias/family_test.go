package logbias_test

import (
	"fmt"
	"image/color"
	"testing"

	"extrapolate/examples/logbias"
	"extrapolate/experiments/config"
	"extrapolate/experiments/measure"
	"extrapolate/experiments/plot"
	"extrapolate/position"
)

// drawn is logbias asking the figures for a look of its own (position.Drawn).
type drawn struct{ logbias.LogBias }

func (drawn) Name() string { return "logbias_drawn" }

func (drawn) Look() position.Look {
	return position.Look{Color: color.RGBA{R: 10, G: 20, B: 30, A: 255}, Marker: "plus"}
}

func init() {
	position.Register("logbias_drawn", func(s position.Spec) (position.Scheme, error) {
		return drawn{logbias.LogBias{Heads: s.Heads, Init: 1}}, nil
	})
}

// report is a comparison's aggregate of one run of each scheme, each labelled by its scheme.
func report(t *testing.T, schemes ...string) *measure.Report {
	t.Helper()
	rep := &measure.Report{Name: "families"}
	for _, scheme := range schemes {
		c := config.Default()
		c.Name = "families"
		c.Position = position.Config{Scheme: scheme}
		if err := c.Complete(); err != nil {
			t.Fatal(err)
		}
		rc, err := c.Resolve()
		if err != nil {
			t.Fatal(err)
		}
		rep.Runs = append(rep.Runs, measure.RunResult{Label: scheme, Seed: 1, Resolved: rc, Result: &measure.Result{Status: measure.OK}})
	}
	rep.Aggregate()
	return rep
}

// TestFamily checks that a scheme registered from this package is drawn in the panel of the
// attention biases, as ALiBi is, from what it is (a bias on the scores), with no table of
// scheme names edited for it.
func TestFamily(t *testing.T) {
	rep := report(t, "logbias", "alibi", "rope")
	fam := rep.Families()
	want := map[string]plot.Family{"logbias": plot.Bias, "alibi": plot.Bias, "rope": plot.RoPE}
	for f, idx := range fam {
		for _, i := range idx {
			if label := rep.Series[i].Label; want[label] != plot.Family(f) {
				t.Errorf("%s in %q, want %q", label, plot.Family(f).Title(), want[label].Title())
			}
		}
	}
}

// TestStyle checks that a scheme registered from this package is drawn from what it is, with no
// table of scheme names edited for it: logbias as a scheme of its family, a solid line with a
// marker none of the built-in biases has, in a colour none of the built-in schemes has;
// logbias_drawn in the look it asks for; and the built-in ones as the table draws them.
func TestStyle(t *testing.T) {
	rep := report(t, "logbias", "logbias_drawn", "alibi", "t5", "kerple", "fire", "hard_alibi")
	builtin := map[string]bool{}
	for _, scheme := range []string{"alibi", "t5", "kerple", "fire", "hard_alibi"} {
		builtin[fmt.Sprint(plot.SchemeStyle(scheme).Color)] = true
		if got := rep.StyleOf(scheme); got == nil || !plot.Same(*got, plot.SchemeStyle(scheme)) {
			t.Errorf("%s: %+v, want the table's %+v", scheme, got, plot.SchemeStyle(scheme))
		}
	}
	s := rep.StyleOf("logbias")
	if s == nil || s.Dashes != nil || s.Shape == nil || builtin[fmt.Sprint(s.Color)] {
		t.Fatalf("logbias: %+v, want a solid line with a marker, in a colour of its own", s)
	}
	for _, scheme := range []string{"alibi", "t5", "kerple", "fire"} {
		if fmt.Sprintf("%T", plot.SchemeStyle(scheme).Shape) == fmt.Sprintf("%T", s.Shape) {
			t.Errorf("logbias: the marker of %s, in its panel", scheme)
		}
	}
	d := rep.StyleOf("logbias_drawn")
	if d == nil || d.Color != (color.RGBA{R: 10, G: 20, B: 30, A: 255}) || fmt.Sprintf("%T", d.Shape) != "draw.PlusGlyph" || d.Dashes != nil {
		t.Errorf("logbias_drawn: %+v, want its own colour and a plus, solid", d)
	}
}
