package sinks

import (
	"math"
	"strings"
	"testing"

	"extrapolate/experiments/internal/testrun"
	"extrapolate/experiments/measure"
	"extrapolate/model/nn"
)

// TestOf checks a length's sinks from two layers' statistics summed over 4 windows of 4 tokens,
// worked by hand: the rate is the share of (layer, head, window) sinks, the weight the mean of
// every head's mean over queries and windows.
func TestOf(t *testing.T) {
	const n = 4
	stats := []*nn.AttentionStats{
		// Layer 0: head 0 all on the first token (a sink in every window), head 1 on it only at
		// query 0 (4 windows × weight 1, then 0: never a sink).
		{First: []float64{4, 4, 4, 4, 4, 0, 0, 0}, Sinks: []int{4, 0}, Sequences: 4},
		// Layer 1: head 0 a sink in 1 window of 4, weights 4, 2, 1, 1 summed over windows.
		{First: []float64{4, 2, 1, 1, 0, 0, 0, 0}, Sinks: []int{1, 0}, Sequences: 4},
	}
	sl := of(stats, n)
	wantLayers := []Layer{
		{Layer: 0, Rate: (1 + 0) / 2.0, First: (1 + 0.25) / 2},
		{Layer: 1, Rate: (0.25 + 0) / 2, First: (8.0 / 16) / 2},
	}
	for l, want := range wantLayers {
		if got := sl.Layers[l]; math.Abs(got.Rate-want.Rate) > 1e-15 || math.Abs(got.First-want.First) > 1e-15 || got.Layer != want.Layer {
			t.Errorf("layer %d: %+v, want %+v", l, got, want)
		}
	}
	if want := (0.5 + 0.125) / 2; math.Abs(sl.Rate-want) > 1e-15 {
		t.Errorf("rate %v, want %v", sl.Rate, want)
	}
	if want := (0.625 + 0.25) / 2; math.Abs(sl.First-want) > 1e-15 {
		t.Errorf("first-token weight %v, want %v", sl.First, want)
	}
	if len(sl.heads) != 4 || sl.heads[2].Rate != 0.25 || sl.heads[2].First != 0.5 || sl.Windows != 4 {
		t.Errorf("heads %+v over %d windows, want layer 1 head 0 at rate 0.25, weight 0.5, over 4", sl.heads, sl.Windows)
	}
}

// TestCheck checks that a run's sinks are refused when they cannot be the run's.
func TestCheck(t *testing.T) {
	c := testrun.Config(t, "rope")
	c.Model.Layers = 2
	c.Eval.Lengths = []int{64, 128}
	r := measure.RunResult{Resolved: testrun.Resolved(t, c)}
	good := func() []Length {
		ly := []Layer{{Layer: 0, Rate: 0.5, First: 0.4}, {Layer: 1, Rate: 0, First: 0.1}}
		return []Length{{Length: 64, Applicable: true, Rate: 0.25, First: 0.25, Layers: ly}, {Length: 128, Reason: "not finite"}}
	}
	if err := check(good(), r); err != nil {
		t.Fatalf("good sinks refused: %v", err)
	}
	for name, c := range map[string]struct {
		edit func([]Length) []Length
		want string
	}{
		"missing":      {func([]Length) []Length { return nil }, "missing"},
		"lengths":      {func(ls []Length) []Length { return ls[:1] }, "lengths"},
		"no reason":    {func(ls []Length) []Length { ls[1].Reason = ""; return ls }, "reason"},
		"layers":       {func(ls []Length) []Length { ls[0].Layers = ls[0].Layers[:1]; return ls }, "layers"},
		"rate":         {func(ls []Length) []Length { ls[0].Rate = 1.5; return ls }, "between 0 and 1"},
		"weight":       {func(ls []Length) []Length { ls[0].First = math.NaN(); return ls }, "between 0 and 1"},
		"layer weight": {func(ls []Length) []Length { ls[0].Layers[1].First = -0.1; return ls }, "layer 1"},
	} {
		if err := check(c.edit(good()), r); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error naming %q", name, err, c.want)
		}
	}
}
