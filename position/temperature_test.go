package position

import (
	"math"
	"slices"
	"strings"
	"testing"
)

func TestTemperatureRegistry(t *testing.T) {
	if got := Temperatures(); !slices.Equal(got, []string{"logn", "logn_train", "ssmax"}) {
		t.Errorf("built-in temperatures %v", got)
	}
	spec := TemperatureSpec{Heads: 2, TrainLen: 16}
	if tp, err := NewTemperature("", spec); tp != nil || err != nil {
		t.Errorf("no name: %v, %v; want no temperature", tp, err)
	}
	_, err := NewTemperature("cold", spec)
	if err == nil || err.Error() != `unknown scale "cold" (known: logn, logn_train, ssmax)` {
		t.Errorf("unknown name: %v", err)
	}
	for _, name := range Temperatures() {
		if _, err := NewTemperature(name, TemperatureSpec{Heads: 2, TrainLen: 1}); err == nil || !strings.Contains(err.Error(), "training length of at least 2") {
			t.Errorf("%s at a training length of 1: %v", name, err)
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("registering logn twice did not panic")
		}
	}()
	RegisterTemperature("logn", nil)
}

// The built-in temperatures' factors, from their formulas; ssmax at its initial weights is 1 at
// the training length, and logn_train is ssmax with every weight at 1.
func TestTemperatureFactors(t *testing.T) {
	const heads, l, n = 2, 4, 9
	spec := TemperatureSpec{Heads: heads, TrainLen: l}
	factors := map[string][]float64{}
	for _, name := range Temperatures() {
		tp, err := NewTemperature(name, spec)
		if err != nil {
			t.Fatal(err)
		}
		var w [][]float64
		for _, x := range LayerWeightsOf(tp) {
			w = append(w, x.Init)
		}
		if factors[name], err = QueryScaleAt(tp, w, n); err != nil || len(factors[name]) != heads*n {
			t.Fatalf("%s: %d factors, %v", name, len(factors[name]), err)
		}
	}
	for h := 0; h < heads; h++ {
		for i := 0; i < n; i++ {
			logn := math.Max(1, math.Log(float64(i+1))/math.Log(l))
			near(t, "logn", factors["logn"][h*n+i:h*n+i+1], []float64{logn})
			near(t, "logn_train", factors["logn_train"][h*n+i:h*n+i+1], []float64{math.Log(float64(i + 1))})
			near(t, "ssmax", factors["ssmax"][h*n+i:h*n+i+1], []float64{math.Log(float64(i+1)) / math.Log(l)})
		}
	}
	if f, err := QueryScaleForm(nil); f != Absent || err != nil {
		t.Errorf("no temperature: %v, %v", f, err)
	}
	ssmax, _ := NewTemperature("ssmax", spec)
	ones := [][]float64{{1, 1}}
	got, _ := QueryScaleAt(ssmax, ones, n)
	near(t, "ssmax at s = 1", got, factors["logn_train"])
	// Its gradient: d/ds_h of Σ_i dScale_i·s_h·log(i+1).
	dScale := make([]float64, heads*n)
	for i := range dScale {
		dScale[i] = float64(i%5) - 2
	}
	dw := [][]float64{make([]float64, heads)}
	QueryScaleGrad(ssmax, ones, n, dScale, dw)
	for h := 0; h < heads; h++ {
		want := 0.0
		for i := 0; i < n; i++ {
			want += dScale[h*n+i] * math.Log(float64(i+1))
		}
		near(t, "ssmax gradient", dw[0][h:h+1], []float64{want})
	}
}
