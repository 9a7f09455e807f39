package config

import (
	"path/filepath"
	"strings"
	"testing"

	"extrapolate/position"
)

// TestMemoryEstimate checks the estimate against the sizes that must fit (every committed
// config) and those of the issue that died of out-of-memory, and that Check refuses the latter
// naming the estimate.
func TestMemoryEstimate(t *testing.T) {
	configs, _ := filepath.Glob(filepath.Join("..", "..", "configs", "*.yaml"))
	for _, path := range configs {
		if isComparison(t, path) {
			continue
		}
		r, err := LoadResolved(path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if e := r.Memory(); e.Total() > 2<<30 {
			t.Errorf("%s: estimate %s, want well below 2 GiB", path, bytesString(e.Total()))
		}
	}
	for _, sets := range [][]string{
		{"model.d_model=8192", "model.layers=256"},
		{"model.d_model=8192", "train.batch_size=65536"},
	} {
		_, err := Load(filepath.Join("..", "..", "configs", "rope.yaml"), sets)
		if err == nil || !strings.Contains(err.Error(), "of memory") || !strings.Contains(err.Error(), "TiB") {
			t.Errorf("%v: %v, want a refusal naming the estimate in TiB", sets, err)
		}
	}
}

// isComparison reports whether the config file at path is a comparison's, which package
// experiments reads, by the keys it has and a run's has not.
func isComparison(t *testing.T, path string) bool {
	t.Helper()
	root, err := ReadYAML(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(root.Content); i += 2 {
		if k := root.Content[i].Value; k == "comparison" || k == "runs" {
			return true
		}
	}
	return false
}

// TestPositionCost checks what each kind of scheme is counted to return at n positions against
// the sizes of what it returns there: FIRE's bias per query, heads × n² a layer; a fixed bias
// by distance once; xPos's four tables a layer; a learned table.
func TestPositionCost(t *testing.T) {
	const layers, heads, d, n = 3, 4, 32, 50
	for _, c := range []struct {
		scheme       string
		values, bias int64
	}{
		{"fire", layers * heads * n * n, layers * heads * n * n},
		{"alibi", heads * n, heads * n},
		{"kerple", layers * heads * n, layers * heads * n},
		{"xpos", layers * 4 * (d / heads / 2) * n, 0},
		{"learned", n * d, 0},
	} {
		spec := position.Spec{DModel: d, Heads: heads, Layers: layers, TrainLen: n, Config: position.Config{Scheme: c.scheme}}
		s, err := position.New(spec)
		if err != nil {
			t.Fatal(err)
		}
		pc, err := positionCost(s, layers, heads, d, n)
		if err != nil {
			t.Fatal(err)
		}
		if pc.Values != c.values || pc.Bias != c.bias {
			t.Errorf("%s: %+v, want %d values, %d of them bias", c.scheme, pc, c.values, c.bias)
		}
		// The largest piece is one layer's bias, or rotation, as the scheme returns it at n.
		var largest int
		if b, ok := s.(position.LearnedBiaser); ok {
			var w [][]float64
			for _, x := range b.Weights() {
				w = append(w, make([]float64, x.Size()))
			}
			bias, _ := b.LearnedBias(w, 0, n)
			largest = len(bias.Values)
		}
		if b, ok := s.(position.Biaser); ok {
			bias, _ := b.Bias(n)
			largest = len(bias.Values)
		}
		if r, ok := s.(position.Rotator); ok {
			rot, _ := r.Rotation(n)
			largest = len(rot.Cos) + len(rot.Sin) + len(rot.KeyCos) + len(rot.KeySin)
		}
		if c.scheme == "learned" {
			largest = n * d
		}
		if pc.Largest != int64(largest) {
			t.Errorf("%s: largest piece %d, want %d", c.scheme, pc.Largest, largest)
		}
	}
}
