package position

import (
	"math"
	"testing"
)

// TestXPosTables checks xPos's query and key tables against torchscale's XPOS formula
// (testdata/golden.py, xpos_tables) at position 5, d = 8, B = 16.
func TestXPosTables(t *testing.T) {
	s, err := New(Spec{DModel: 8, Heads: 1, TrainLen: 8, Config: Config{Scheme: "xpos", Params: map[string]any{"scale_base": 16, "pairing": "interleaved"}}})
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.(Rotator).Rotation(6)
	if err != nil {
		t.Fatal(err)
	}
	at := func(x []float64) []float64 { return x[5*4 : 6*4] }
	near(t, "q cos", at(r.Cos), []float64{0.19176978472167372, 0.6904915969879357, 0.8699467672556193, 0.9403675523514382})
	near(t, "q sin", at(r.Sin), []float64{-0.6482806349962952, 0.3772172786507244, 0.043533622429248416, 0.004701876944130362})
	near(t, "k cos", at(r.KeyCos), []float64{0.4195876612082349, 1.1153664379025399, 1.1466242765471577, 1.0633873932674973})
	near(t, "k sin", at(r.KeySin), []float64{-1.4184223851503464, 0.6093274621143571, 0.057379037663286, 0.005316981274588621})
}

// TestXPosRelativeAndDecaying checks the two properties the paper builds xPos on: the score of a
// query and a key depends only on their distance, and for a query and key aligned with one
// pair, it shrinks as the distance grows (by ζ_i^(δ/B) times RoPE's cos(δ·θ_i)).
func TestXPosRelativeAndDecaying(t *testing.T) {
	s, err := New(Spec{DModel: 8, Heads: 1, TrainLen: 16, Config: Config{Scheme: "xpos", Params: map[string]any{"scale_base": 8}}})
	if err != nil {
		t.Fatal(err)
	}
	r, _ := s.(Rotator).Rotation(64)
	q, k := []float64{0.3, -1.2, 0.7, 0.2, -0.5, 0.9, 1.1, -0.4}, []float64{1.0, 0.4, -0.6, 0.8, 0.3, -0.7, 0.2, 0.5}
	score := func(i, j int) float64 { return dot(r.Apply(q, i), r.ApplyKey(k, j)) }
	for dist := 0; dist < 20; dist++ {
		ref := score(dist, 0)
		for i := dist; i < 64; i += 5 {
			if got := score(i, i-dist); math.Abs(got-ref) > 1e-9*math.Max(1, math.Abs(ref)) {
				t.Fatalf("distance %d: score at (%d,%d) %.12g, at (%d,0) %.12g", dist, i, i-dist, got, dist, ref)
			}
		}
	}
	// The slowest pair (i = 3, turning 0.001 radians per position) aligned: the score is
	// ζ_3^(δ/B)·cos(0.001δ), below 1 and falling.
	e := []float64{0, 0, 0, 1, 0, 0, 0, 0}
	prev := math.Inf(1)
	for dist := 0; dist < 64; dist += 8 {
		got := dot(r.Apply(e, dist), r.ApplyKey(e, 0))
		z := (6.0/8 + 0.4) / 1.4
		if want := math.Pow(z, float64(dist)/8) * math.Cos(0.001*float64(dist)); math.Abs(got-want) > 1e-12 {
			t.Fatalf("distance %d: %.15g, want %.15g", dist, got, want)
		}
		if got >= prev {
			t.Fatalf("distance %d: %g does not fall from %g", dist, got, prev)
		}
		prev = got
	}
}

// TestRotaryFraction checks GPT-NeoX's partial rotation: half of a 16-wide head rotates, with
// the frequencies of an 8-wide one (rotary_ndims = 8).
func TestRotaryFraction(t *testing.T) {
	s, err := New(Spec{DModel: 16, Heads: 1, TrainLen: 8, Config: Config{Scheme: "rope", Params: map[string]any{"rotary_fraction": 0.5}}})
	if err != nil {
		t.Fatal(err)
	}
	r, _ := s.(Rotator).Rotation(4)
	near(t, "inv_freq", r.InvFreq, []float64{1.0, 0.1, 0.01, 0.001})
	for _, f := range []float64{0, -0.5, 1.5, 0.05} {
		if _, err := New(Spec{DModel: 16, Heads: 1, TrainLen: 8, Config: Config{Scheme: "rope", Params: map[string]any{"rotary_fraction": f}}}); err == nil {
			t.Errorf("rotary_fraction %g: no error", f)
		}
	}
}
