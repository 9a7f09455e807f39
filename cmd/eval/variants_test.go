package main

import (
	"context"
	"flag"
	"maps"
	"slices"
	"sync"
	"testing"

	"extrapolate/cmd/internal/scalingflag"
	"extrapolate/experiments/evaluate"
	"extrapolate/experiments/training"
	"extrapolate/position"
)

// builds counts the schemes built of counted_rope, by scaling type ("none" for none).
var builds struct {
	sync.Mutex
	n map[string]int
}

// counted_rope is RoPE, built through a factory that counts its builds.
func init() {
	position.Register("counted_rope", func(s position.Spec) (position.Scheme, error) {
		key := "none"
		if s.Config.Scaling != nil {
			key = s.Config.Scaling.Type
		}
		builds.Lock()
		if builds.n != nil {
			builds.n[key]++
		}
		builds.Unlock()
		inner := s
		inner.Config.Scheme, inner.Config.DistanceMap, inner.Config.Window = "rope", nil, 0
		return position.New(inner)
	})
}

func countBuilds(f func()) map[string]int {
	builds.Lock()
	builds.n = map[string]int{}
	builds.Unlock()
	f()
	builds.Lock()
	defer builds.Unlock()
	n := builds.n
	builds.n = nil
	return n
}

// TestVariantsBuiltOnce: with the default -scaling, the variants are none and every registered
// scaling (RoPE takes each), each variant's scheme is built once, when the variants are made,
// and evaluating them builds none.
func TestVariantsBuiltOnce(t *testing.T) {
	tr, err := training.LoadCheckpoint(train(t, "counted_rope"))
	if err != nil {
		t.Fatal(err)
	}
	o := &options{fields: scalingflag.Register(flag.NewFlagSet("eval", flag.ContinueOnError))}
	var list []evaluate.Variant
	got := countBuilds(func() {
		if list, err = o.variants(tr.Config(), position.Factor{Auto: true}, []*position.DistanceMapConfig{nil}); err != nil {
			t.Fatal(err)
		}
	})
	want := map[string]int{"none": 1}
	for _, name := range position.ScalingTypes() {
		want[name] = 1
	}
	if len(list) != len(want) || !maps.Equal(got, want) {
		t.Errorf("%d variants, schemes built by scaling %v; want %d variants, %v", len(list), got, len(want), want)
	}
	got = countBuilds(func() {
		if _, err := evaluate.Variants(context.Background(), tr, list, nil); err != nil {
			t.Fatal(err)
		}
	})
	if len(got) != 0 {
		t.Errorf("evaluation built schemes again: %v", got)
	}
	// A -factor of the user's builds each scaling again at it: twice, the trial at the defaults
	// that says RoPE takes it and the variant, and none once.
	got = countBuilds(func() {
		if _, err = o.variants(tr.Config(), position.Factor{Value: 2}, []*position.DistanceMapConfig{nil}); err != nil {
			t.Fatal(err)
		}
	})
	for _, name := range slices.Sorted(maps.Keys(want)) {
		w := 2
		if name == "none" {
			w = 1
		}
		if got[name] != w {
			t.Errorf("-factor 2: %s built %d times, want %d", name, got[name], w)
		}
	}
}
