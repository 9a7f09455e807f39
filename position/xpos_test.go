package position

import (
	"fmt"
	"math"
	"strings"
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

// TestXPosRefusesOverflow checks that xPos refuses the lengths at which its scales leave
// float32's safe range, 2^±64, naming the field, and takes every length up to there, where its
// tables are finite in float32.
func TestXPosRefusesOverflow(t *testing.T) {
	xpos := func(params map[string]any) Scheme {
		s, err := New(Spec{DModel: 16, Heads: 2, TrainLen: 64, Config: Config{Scheme: "xpos", Params: params}})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	for _, b := range []float64{8, 512} {
		s := xpos(map[string]any{"scale_base": b})
		// The longest length whose largest scale, the key's at the last position for the pair
		// with ζ = γ/(1+γ), is at most 2^64: found by trying, not by the scheme's formula.
		longest := 1
		for math.Pow(0.4/1.4, -float64(longest)/b) <= math.Exp2(64) {
			longest++
		}
		c := s.(LengthChecker)
		if err := c.CheckLength(longest); err != nil {
			t.Errorf("scale_base %g: %d positions refused: %v", b, longest, err)
		}
		err := c.CheckLength(longest + 1)
		if err == nil || !strings.HasPrefix(err.Error(), "position.scale_base: ") || strings.Contains(err.Error(), "\n") ||
			!strings.Contains(err.Error(), fmt.Sprintf("lengths up to %d", longest)) {
			t.Errorf("scale_base %g at %d positions: %v, want a one-line error naming position.scale_base and %d", b, longest+1, err, longest)
		}
		if _, err := s.(Rotator).Rotation(longest + 1); err == nil {
			t.Errorf("scale_base %g: Rotation(%d) computed tables past the bound", b, longest+1)
		}
		if b == 8 {
			r, err := s.(Rotator).Rotation(longest)
			if err != nil {
				t.Fatal(err)
			}
			for i, x := range [][]float64{r.Cos, r.Sin, r.KeyCos, r.KeySin} {
				for _, v := range x {
					if f := float64(float32(v)); math.IsInf(f, 0) || math.IsNaN(f) || v != 0 && math.Abs(f) < 0x1p-126 {
						t.Fatalf("table %d at %d positions: %g in float32", i, longest, f)
					}
				}
			}
		}
	}
	// The case: B = 8 at 1024 positions made the keys' scale infinite in float32.
	if k := float32(math.Pow(0.4/1.4, -1023.0/8)); !math.IsInf(float64(k), 1) {
		t.Fatalf("the key scale at 1024 positions is %g in float32; the case no longer shows the overflow", k)
	}
	err := xpos(map[string]any{"scale_base": 8}).(LengthChecker).CheckLength(1024)
	if err == nil || !strings.HasPrefix(err.Error(), "position.scale_base: 8 ") {
		t.Errorf("scale_base 8 at 1024: %v", err)
	}
	err = xpos(map[string]any{"gamma": 1e-30}).(LengthChecker).CheckLength(1024)
	if err == nil || !strings.HasPrefix(err.Error(), "position.gamma: 1e-30 ") {
		t.Errorf("gamma 1e-30 at 1024: %v, want position.gamma named", err)
	}
	if err := xpos(nil).(LengthChecker).CheckLength(16384); err != nil {
		t.Errorf("the defaults at 16384: %v", err)
	}
	// A mix asks its xPos layers.
	mix, err := New(Spec{DModel: 16, Heads: 2, Layers: 2, TrainLen: 64, Config: Config{Scheme: "mix",
		Params: map[string]any{"layers": []any{"nope", map[string]any{"scheme": "xpos", "scale_base": 8}}}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := Check(mix, 1024); err == nil || !strings.Contains(err.Error(), "layer 1: position.scale_base") {
		t.Errorf("a mix with an xPos layer at 1024: %v", err)
	}
}
