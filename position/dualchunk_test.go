package position

import "testing"

// distance is the distance at which query i scores key j under m: the true one, or
// AltQuery(i) − AltKey(j) for an Alt key; −1 for a masked one.
func distance(m DistanceMap, i, j int) float64 {
	for _, s := range m.Spans(i, nil) {
		switch {
		case j < s.From || j >= s.To:
		case s.Alt:
			return m.AltQuery(i) - m.AltKey(j)
		default:
			return float64(i - j)
		}
	}
	return -1
}

// TestDualChunkGolden checks dual_chunk against the distances that ChunkLlama's own code gives
// (testdata/dca_golden.py, which runs its tables, its prefill loop and its decoding path, and
// checks that the two agree): at the defaults for 64 and 1024 tokens (chunk_size 3L/4,
// local_window L/16) in every kind of chunk, and with chunk_size 10 and local_window 6, where a
// chunk (4 keys) is narrower than the local window.
func TestDualChunkGolden(t *testing.T) {
	for _, c := range []struct {
		section string
		l, i, j int
		want    float64
	}{
		{"{type: dual_chunk}", 64, 43, 0, 43},   // the first chunk (44 keys): intra
		{"{type: dual_chunk}", 64, 44, 0, 44},   // successive, within the local window
		{"{type: dual_chunk}", 64, 48, 0, 48},   // the window's last place
		{"{type: dual_chunk}", 64, 49, 0, 48},   // successive, clamped at chunk_size
		{"{type: dual_chunk}", 64, 49, 5, 43},   //
		{"{type: dual_chunk}", 64, 100, 0, 48},  // inter-chunk
		{"{type: dual_chunk}", 64, 100, 43, 5},  //
		{"{type: dual_chunk}", 64, 100, 44, 48}, // successive, clamped
		{"{type: dual_chunk}", 64, 100, 88, 12}, // intra
		{"{type: dual_chunk}", 64, 130, 30, 18}, // inter
		{"{type: dual_chunk}", 64, 130, 87, 5},  // successive, clamped
		{"{type: dual_chunk}", 64, 131, 87, 5},  //
		{"{type: dual_chunk}", 1024, 5000, 17, 751},
		{"{type: dual_chunk}", 1024, 5000, 4000, 288},
		{"{type: dual_chunk}", 1024, 5000, 4500, 492},
		{"{type: dual_chunk, chunk_size: 10, local_window: 6}", 64, 9, 0, 7},
		{"{type: dual_chunk, chunk_size: 10, local_window: 6}", 64, 14, 3, 4},
		{"{type: dual_chunk, chunk_size: 10, local_window: 6}", 64, 17, 2, 5},
	} {
		m := newMap(t, c.section, c.l)
		if got := distance(m, c.i, c.j); got != c.want {
			t.Errorf("%s, L = %d: query %d, key %d at %g, want %g", c.section, c.l, c.i, c.j, got, c.want)
		}
	}
}

// TestDualChunkBounded checks the property DCA is built for: no query sees any key at a distance
// farther than chunk_size, at lengths far past the training length, and nothing is masked.
func TestDualChunkBounded(t *testing.T) {
	for _, l := range []int{16, 64, 1000} {
		m := newMap(t, "{type: dual_chunk}", l)
		limit := float64(l * 3 / 4)
		for i := 0; i < 20*l; i += 7 {
			for j := 0; j <= i; j++ {
				if d := distance(m, i, j); d < 0 || d > limit {
					t.Fatalf("L = %d: query %d, key %d at %g, want within [0, %g]", l, i, j, d, limit)
				}
			}
		}
	}
}
