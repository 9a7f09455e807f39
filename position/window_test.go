package position

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// TestWindowIsTheSchemesOwn checks that a window changes no answer the adapter gives about a
// scheme, every scheme's, and that WindowOf reads it back.
func TestWindowIsTheSchemesOwn(t *testing.T) {
	docs := []string{"{scheme: rope, scaling: {type: yarn, factor: 2}}", "{scheme: xpos}"}
	for _, name := range Names() {
		if name != "mix" {
			docs = append(docs, "{scheme: "+name+"}")
		}
	}
	for _, doc := range docs {
		plain := fromYAML(t, doc)
		with := plain
		with.Window = 8
		spec := Spec{DModel: 8, Heads: 2, Layers: 2, TrainLen: 16}
		spec.Config = plain
		inner, err := New(spec)
		if err != nil {
			t.Fatal(err)
		}
		spec.Config = with
		s, err := New(spec)
		if err != nil {
			t.Fatal(err)
		}
		if WindowOf(s) != 8 || WindowOf(inner) != 0 {
			t.Errorf("%s: windows %d and %d, want 8 and 0", doc, WindowOf(s), WindowOf(inner))
		}
		if got, want := adapterAnswers(s), adapterAnswers(inner); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: with a window the adapter answers\n%v\nwithout\n%v", doc, got, want)
		}
	}
}

// adapterAnswers is everything the adapter says about s, at 12 positions.
func adapterAnswers(s Scheme) []any {
	w := ZeroWeights(s)
	for _, x := range w {
		for i := range x {
			x[i] = 0.01 * float64(i+1) // weights that are not all zero, alike for both
		}
	}
	table, tableErr := TableAt(s, w, 12)
	rot, rotErr := RotationAt(s, 12)
	bias, biasErr := BiasAt(s, w, 1, 12)
	tf, tfErr := TableForm(s)
	bf, bfErr := BiasForm(s)
	sc, takes := ScalingOf(s)
	var row []float64
	if rows := BiasRows(s, w, 1); rows != nil {
		row = make([]float64, 12)
		rows(1, 11, 0, row)
	}
	gate, gated := ForgetGateOf(s)
	sb, breaks := StickBreakingOf(s)
	cp, counted := ContextPositionsOf(s)
	return []any{s.Name(), WeightsOf(s), gate, gated, sb, breaks, cp, counted, table, tableErr, rot, rotErr, bias, biasErr, tf, tfErr, bf, bfErr,
		sc, takes, HasBiasRows(s), row, CheckLength(s, 1<<20), Describe(s, 12), IsPerLayer(s), SourcesOf(s), Check(s, 12)}
}

// TestWindowInMix checks that each slot of a mix keeps its own window, and that InLayer and
// Owners give the windowed schemes.
func TestWindowInMix(t *testing.T) {
	c := fromYAML(t, "{layers: [{scheme: rope, window: 32}, nope, {scheme: alibi, window: 4}], scaling: {type: ntk, factor: 2}}")
	s, err := New(Spec{DModel: 8, Heads: 2, Layers: 5, TrainLen: 64, Config: c})
	if err != nil {
		t.Fatal(err)
	}
	wants := []struct {
		name   string
		window int
	}{{"rope", 32}, {"nope", 0}, {"alibi", 4}, {"rope", 32}, {"nope", 0}}
	owners := Owners(s, 5)
	for l, want := range wants {
		slot := InLayer(s, l)
		if slot.Scheme.Name() != want.name || WindowOf(slot.Scheme) != want.window || slot.Owner != l || owners[l] != slot.Scheme {
			t.Errorf("layer %d: %s with window %d, owner %d; want %s with window %d, owner %d", l, slot.Scheme.Name(), WindowOf(slot.Scheme), slot.Owner, want.name, want.window, l)
		}
	}
	if sc, _ := ScalingOf(InLayer(s, 0).Scheme); sc == nil || sc.Type != "ntk" {
		t.Errorf("the windowed RoPE slot lost the mix's scaling: %+v", sc)
	}
	if WindowOf(s) != 0 {
		t.Errorf("the mix has window %d, want none of its own", WindowOf(s))
	}
}

func TestWindowBadConfigs(t *testing.T) {
	for _, c := range []struct {
		doc, want string
	}{
		{"{scheme: rope, window: -1}", "position.window: -1, want a number of keys of at least 1, or 0 for full attention"},
		{"{scheme: rope, window: 2.5}", "position.window: 2.5, want a whole number (line 1)"},
		{"{layers: [rope, nope], window: 8}", "position.window: the mix scheme gives each layer a scheme of its own: give the window on its slots"},
		{"{layers: [rope, {scheme: nope, window: -2}]}", "position.layers[1]: position.window: -2"},
	} {
		var pc Config
		err := yaml.Unmarshal([]byte(c.doc), &pc)
		if err == nil {
			_, err = New(Spec{DModel: 8, Heads: 2, Layers: 2, TrainLen: 16, Config: pc})
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.doc, err, c.want)
		}
	}
	if s, err := New(Spec{DModel: 8, Heads: 2, Layers: 2, TrainLen: 16, Config: fromYAML(t, "{scheme: rope, window: 0}")}); err != nil || WindowOf(s) != 0 {
		t.Errorf("window 0: %v, window %d; want full attention", err, WindowOf(s))
	}
}

// TestWindowJSON checks that a checkpoint's record of a windowed scheme (its JSON) holds the
// window and the scheme's fields, and reads back onto the scheme a config builds, as
// experiments/training's checkScheme reads it.
func TestWindowJSON(t *testing.T) {
	build := func(doc string) Scheme {
		s, err := New(Spec{DModel: 8, Heads: 2, Layers: 2, TrainLen: 16, Config: fromYAML(t, doc)})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	for _, c := range []struct{ then, now string }{
		{"{scheme: t5, buckets: 16, window: 8}", "{scheme: t5, window: 4}"},
		{"{scheme: rope, base: 500, window: 8}", "{scheme: rope, window: 4}"},
	} {
		then, now := build(c.then), build(c.now)
		rec, err := json.Marshal(then)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(rec), `"window":8`) {
			t.Errorf("%s recorded as %s, without its window", c.then, rec)
		}
		onto := reflect.New(reflect.TypeOf(now))
		onto.Elem().Set(reflect.ValueOf(now))
		if err := json.Unmarshal(rec, onto.Interface()); err != nil {
			t.Fatal(err)
		}
		again, _ := json.Marshal(onto.Elem().Interface())
		if string(again) != string(rec) {
			t.Errorf("%s recorded as %s, read back as %s", c.then, rec, again)
		}
	}
}
