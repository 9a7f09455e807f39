package position

import (
	"strings"
	"testing"
)

// bare implements no optional interface: every question about it has the fallback answer.
type bare struct{}

func (bare) Name() string { return "bare" }

// doubled gives a table and a bias both fixed and from weights.
type doubled struct{ bare }

func (doubled) Embedding(n int) (*Table, error) {
	return &Table{Rows: n, Cols: 1, Values: make([]float64, n)}, nil
}
func (doubled) Weights() []Weight { return []Weight{{Name: "w", Dims: []int{2}}} }
func (doubled) LearnedEmbedding(_ [][]float64, n int) (*Table, error) {
	return &Table{Rows: n, Cols: 1, Values: make([]float64, n)}, nil
}
func (doubled) LearnedEmbeddingGrad([][]float64, int, []float64, [][]float64) {}
func (doubled) Bias(n int) (*Bias, error)                                     { return NewBias(1, n, false), nil }
func (doubled) LearnedBias(_ [][]float64, _, n int) (*Bias, error)            { return NewBias(1, n, false), nil }
func (doubled) LearnedBiasGrad([][]float64, int, int, []float64, [][]float64) {}

func TestAdapterFallsBack(t *testing.T) {
	var s Scheme = bare{}
	if f, err := TableForm(s); f != Absent || err != nil {
		t.Errorf("TableForm: %v, %v; want Absent", f, err)
	}
	if f, err := BiasForm(s); f != Absent || err != nil {
		t.Errorf("BiasForm: %v, %v; want Absent", f, err)
	}
	if tab, err := TableAt(s, nil, 8); tab != nil || err != nil {
		t.Errorf("TableAt: %v, %v; want none", tab, err)
	}
	if r, err := RotationAt(s, 8); r != nil || err != nil {
		t.Errorf("RotationAt: %v, %v; want none", r, err)
	}
	if b, err := BiasAt(s, nil, 0, 8); b != nil || err != nil {
		t.Errorf("BiasAt: %v, %v; want none", b, err)
	}
	if sc, takes := ScalingOf(s); sc != nil || takes {
		t.Errorf("ScalingOf: %v, %v; want none, not taken", sc, takes)
	}
	if err := CheckLength(s, 1<<30); err != nil {
		t.Errorf("CheckLength: %v; want no bound", err)
	}
	if WeightsOf(s) != nil || ZeroWeights(s) != nil || Describe(s, 8) != nil || IsPerLayer(s) {
		t.Errorf("weights %v, zero weights %v, description %v, per layer %v; want none", WeightsOf(s), ZeroWeights(s), Describe(s, 8), IsPerLayer(s))
	}
	if SourcesOf(s) != "" || WindowOf(s) != 0 {
		t.Errorf("sources %q, window %d; want none", SourcesOf(s), WindowOf(s))
	}
	if HasBiasRows(s) || BiasRows(s, nil, 0) != nil {
		t.Errorf("bias rows for a scheme without a bias")
	}
	if g, ok := ForgetGateOf(s); ok || g != (ForgetGate{}) {
		t.Errorf("ForgetGateOf: %+v, %v; want none", g, ok)
	}
	if b, ok := StickBreakingOf(s); ok || b != (StickBreaking{}) {
		t.Errorf("StickBreakingOf: %+v, %v; want none", b, ok)
	}
	if c, ok := ContextPositionsOf(s); ok || c != (ContextPositions{}) {
		t.Errorf("ContextPositionsOf: %+v, %v; want none", c, ok)
	}
	TableGrad(s, nil, 8, nil, nil) // nothing to reach, and no panic
	BiasGrad(s, nil, 0, 8, nil, nil)
	if err := Check(s, 8); err != nil {
		t.Errorf("Check: %v", err)
	}
}

// A scheme that gives a piece both fixed and from weights is refused by every question about
// that piece, with the piece named.
func TestAdapterRefusesDoubled(t *testing.T) {
	var s Scheme = doubled{}
	for what, err := range map[string]error{
		"TableForm": second(TableForm(s)), "TableAt": second(TableAt(s, ZeroWeights(s), 4)),
		"BiasForm": second(BiasForm(s)), "BiasAt": second(BiasAt(s, ZeroWeights(s), 0, 4)), "Check": Check(s, 4),
	} {
		if err == nil || !strings.Contains(err.Error(), "both a fixed and a learned") {
			t.Errorf("%s: %v; want both a fixed and a learned ...", what, err)
		}
	}
	if w := ZeroWeights(s); len(w) != 1 || len(w[0]) != 2 {
		t.Errorf("ZeroWeights: %v; want one weight of 2 zeros", w)
	}
}

func second[T any](_ T, err error) error { return err }

// A whole-model scheme acts in every layer as itself, with one set of weights; a mix's layers
// each have their own scheme, as its only layer, with weights of their own.
func TestAdapterLayers(t *testing.T) {
	spec := Spec{DModel: 8, Heads: 2, Layers: 3, TrainLen: 16, Config: Config{Scheme: "kerple"}}
	k, err := New(spec)
	if err != nil {
		t.Fatal(err)
	}
	if o := Owners(k, 3); len(o) != 1 || o[0] != k {
		t.Errorf("kerple's owners %v, want itself", o)
	}
	if in := InLayer(k, 2); in.Scheme != k || in.Layer != 2 || in.Owner != 0 {
		t.Errorf("kerple's layer 2: %+v", in)
	}
	spec.Config = Config{Scheme: "mix", Params: map[string]any{"layers": []any{"rope", "kerple"}}}
	m, err := New(spec)
	if err != nil {
		t.Fatal(err)
	}
	o := Owners(m, 3)
	if len(o) != 3 || o[0].Name() != "rope" || o[1].Name() != "kerple" || o[2].Name() != "rope" {
		t.Fatalf("mix's owners %v, want rope, kerple, rope", o)
	}
	if in := InLayer(m, 1); in.Scheme != o[1] || in.Layer != 0 || in.Owner != 1 {
		t.Errorf("mix's layer 1: %+v", in)
	}
	if r, err := RotationAt(InLayer(m, 2).Scheme, 16); r == nil || err != nil {
		t.Errorf("mix's layer 2 rotation: %v, %v", r, err)
	}
	if f, _ := BiasForm(InLayer(m, 1).Scheme); f != FromWeights {
		t.Errorf("mix's layer 1 bias: %v, want FromWeights", f)
	}
}

// FoX's forget gate is found through the adapter, in a scheme of the whole model, with a window,
// and in a mix's slot, whose weights are its own: one layer's.
func TestAdapterForgetGate(t *testing.T) {
	for _, doc := range []string{"{scheme: fox}", "{scheme: fox, window: 4}", "{layers: [rope, fox]}"} {
		s, err := New(Spec{DModel: 8, Heads: 2, Layers: 2, TrainLen: 16, Config: fromYAML(t, doc)})
		if err != nil {
			t.Fatal(err)
		}
		in := InLayer(s, 1)
		g, ok := ForgetGateOf(in.Scheme)
		w := WeightsOf(in.Scheme)
		if !ok || len(w) != 2 || w[g.Weight].Name != "fox.wf" || w[g.Bias].Name != "fox.bf" {
			t.Fatalf("%s: gate %+v, %v of weights %+v", doc, g, ok, w)
		}
		layers := 2
		if IsPerLayer(s) {
			layers = 1
		}
		if d := w[g.Weight].Dims; len(d) != 3 || d[0] != layers || d[1] != 8 || d[2] != 2 {
			t.Errorf("%s: gate weight of shape %v, want (%d, 8, 2)", doc, d, layers)
		}
		if d := w[g.Bias].Dims; len(d) != 2 || d[0] != layers || d[1] != 2 {
			t.Errorf("%s: gate bias of shape %v, want (%d, 2)", doc, d, layers)
		}
		if _, ok := ForgetGateOf(InLayer(s, 0).Scheme); ok != !IsPerLayer(s) {
			t.Errorf("%s: layer 0 has a gate: %v", doc, ok)
		}
		if f, _ := BiasForm(in.Scheme); f != Absent {
			t.Errorf("%s: the gate's bias is not a position bias, but BiasForm says %v", doc, f)
		}
	}
}

// Stick-breaking is found through the adapter, with its attend_current, in a scheme of the whole
// model, with a window, and in a mix's slot only; it has no weights, bias, rotation or table.
func TestAdapterStickBreaking(t *testing.T) {
	for doc, want := range map[string]StickBreaking{
		"{scheme: stickbreaking}":                       {},
		"{scheme: stickbreaking, attend_current: true}": {AttendCurrent: true},
		"{scheme: stickbreaking, window: 4}":            {},
		"{layers: [rope, stickbreaking]}":               {},
	} {
		s, err := New(Spec{DModel: 8, Heads: 2, Layers: 2, TrainLen: 16, Config: fromYAML(t, doc)})
		if err != nil {
			t.Fatal(err)
		}
		in := InLayer(s, 1).Scheme
		if b, ok := StickBreakingOf(in); !ok || b != want {
			t.Errorf("%s: StickBreakingOf %+v, %v; want %+v", doc, b, ok, want)
		}
		if _, ok := StickBreakingOf(InLayer(s, 0).Scheme); ok != !IsPerLayer(s) {
			t.Errorf("%s: layer 0 breaks sticks: %v", doc, ok)
		}
		tf, _ := TableForm(in)
		bf, _ := BiasForm(in)
		rot, _ := RotationAt(in, 16)
		if WeightsOf(in) != nil || tf != Absent || bf != Absent || rot != nil {
			t.Errorf("%s: weights %v, table %v, bias %v, rotation %v; want none", doc, WeightsOf(in), tf, bf, rot)
		}
	}
	if _, err := New(Spec{DModel: 8, Heads: 2, Layers: 2, TrainLen: 16, Config: fromYAML(t, "{scheme: stickbreaking, attend: true}")}); err == nil {
		t.Error("an unknown field: no error")
	}
}

// CoPE's embeddings are found through the adapter, in a scheme of the whole model, with a window,
// and in a mix's slot, whose weights are its own: one layer's.
func TestAdapterContextPositions(t *testing.T) {
	for _, doc := range []string{"{scheme: cope}", "{scheme: cope, window: 4}", "{layers: [rope, {scheme: cope, npos: 5}]}"} {
		s, err := New(Spec{DModel: 8, Heads: 2, Layers: 2, TrainLen: 16, Config: fromYAML(t, doc)})
		if err != nil {
			t.Fatal(err)
		}
		in := InLayer(s, 1)
		c, ok := ContextPositionsOf(in.Scheme)
		w := WeightsOf(in.Scheme)
		if !ok || len(w) != 1 || w[c.Embedding].Name != "cope.emb" {
			t.Fatalf("%s: positions %+v, %v of weights %+v", doc, c, ok, w)
		}
		layers, npos := 2, 17
		if IsPerLayer(s) {
			layers, npos = 1, 5
		}
		if d := w[c.Embedding].Dims; len(d) != 3 || d[0] != layers || d[1] != 4 || d[2] != npos {
			t.Errorf("%s: embeddings of shape %v, want (%d, 4, %d)", doc, d, layers, npos)
		}
		if _, ok := ContextPositionsOf(InLayer(s, 0).Scheme); ok != !IsPerLayer(s) {
			t.Errorf("%s: layer 0 has contextual positions: %v", doc, ok)
		}
		if f, _ := BiasForm(in.Scheme); f != Absent {
			t.Errorf("%s: CoPE adds no position bias, but BiasForm says %v", doc, f)
		}
	}
}
