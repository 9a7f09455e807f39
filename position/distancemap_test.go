package position

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// newMap builds a distance map from a YAML section, as a config gives it.
func newMap(t *testing.T, section string, trainLen int) DistanceMap {
	t.Helper()
	c := fromYAML(t, "{scheme: rope, distance_map: "+section+"}")
	m, err := NewDistanceMap(c.DistanceMap, trainLen)
	if err != nil {
		t.Fatalf("%s: %v", section, err)
	}
	return m
}

// seen says how query i sees key j under m: "masked", "exact", or "alt d" with d the distance
// AltQuery(i) − AltKey(j).
func seen(m DistanceMap, i, j int) string {
	for _, s := range m.Spans(i, nil) {
		switch {
		case j < s.From || j >= s.To:
		case s.Alt:
			return fmt.Sprintf("alt %g", m.AltQuery(i)-m.AltKey(j))
		default:
			return "exact"
		}
	}
	return "masked"
}

// TestDistanceMapGolden checks each map against distances worked out by hand from its paper's
// formula (given in each case's comment), at small and large positions, with the fields given
// and with their defaults for the training length L.
func TestDistanceMapGolden(t *testing.T) {
	for _, c := range []struct {
		section string
		l, i, j int
		want    string
	}{
		// rerope: min(i−j, w).
		{"{type: rerope, window: 16}", 64, 0, 0, "exact"},
		{"{type: rerope, window: 16}", 64, 15, 0, "exact"},
		{"{type: rerope, window: 16}", 64, 16, 0, "alt 16"},
		{"{type: rerope, window: 16}", 64, 10000, 3, "alt 16"},
		{"{type: rerope, window: 16}", 64, 10000, 9985, "exact"},
		{"{type: rerope, window: 16}", 64, 10000, 9984, "alt 16"},
		{"{type: rerope}", 64, 100, 92, "alt 8"}, // w = 64/8
		{"{type: rerope}", 64, 100, 93, "exact"},
		{"{type: rerope}", 4096, 10000, 3, "alt 512"},
		{"{type: rerope}", 4, 1, 0, "alt 1"}, // w = max(1, 4/8)
		{"{type: rerope}", 4, 5, 5, "exact"},
		// leaky_rerope: w + (i−j−w)/k past w.
		{"{type: leaky_rerope, window: 16, k: 4}", 64, 10000, 3, "alt 2511.25"}, // 16 + 9981/4
		{"{type: leaky_rerope, window: 16, k: 4}", 64, 20, 4, "alt 16"},
		{"{type: leaky_rerope, window: 16, k: 4}", 64, 20, 5, "exact"},
		{"{type: leaky_rerope}", 64, 1000, 0, "alt 70"}, // 8 + 992/16
		// self_extend: ⌊i/G⌋ + W − ⌊W/G⌋ − ⌊j/G⌋ for i − j ≥ W.
		{"{type: self_extend, group: 4, window: 8}", 64, 7, 0, "exact"},
		{"{type: self_extend, group: 4, window: 8}", 64, 8, 0, "alt 8"},        // 2 + 8 − 2 − 0
		{"{type: self_extend, group: 4, window: 8}", 64, 10000, 3, "alt 2506"}, // 2500 + 6 − 0
		{"{type: self_extend, group: 4, window: 8}", 64, 10001, 9990, "alt 9"}, // 2500 + 6 − 2497
		{"{type: self_extend, group: 4, window: 8}", 64, 10001, 9994, "exact"}, // 7 < 8
		{"{type: self_extend}", 64, 10000, 3, "alt 1264"},                      // G 8, W 16: 1250 + 14
		{"{type: self_extend}", 100, 24, 0, "alt 24"},                          // W = 24, L/4 down to 8s: 3 + 21
		{"{type: self_extend}", 100, 23, 0, "exact"},
		// lm_infinite: the first `global` keys and the last `window`, at min(i−j, cap).
		{"{type: lm_infinite, global: 2, window: 4, cap: 6}", 64, 3, 0, "exact"},
		{"{type: lm_infinite, global: 2, window: 4, cap: 6}", 64, 10, 0, "alt 6"},
		{"{type: lm_infinite, global: 2, window: 4, cap: 6}", 64, 10, 1, "alt 6"},
		{"{type: lm_infinite, global: 2, window: 4, cap: 6}", 64, 10, 2, "masked"},
		{"{type: lm_infinite, global: 2, window: 4, cap: 6}", 64, 10, 6, "masked"},
		{"{type: lm_infinite, global: 2, window: 4, cap: 6}", 64, 10, 7, "exact"},
		{"{type: lm_infinite, global: 2, window: 4, cap: 6}", 64, 5, 0, "exact"},
		{"{type: lm_infinite, global: 2, window: 4, cap: 6}", 64, 6, 0, "exact"},
		{"{type: lm_infinite, global: 2, window: 4, cap: 6}", 64, 7, 0, "alt 6"},
		{"{type: lm_infinite, global: 2, window: 4, cap: 6}", 64, 10000, 3, "masked"},
		{"{type: lm_infinite, global: 2, window: 4, cap: 6}", 64, 10000, 1, "alt 6"},
		{"{type: lm_infinite, global: 0, window: 8, cap: 3}", 64, 10, 5, "alt 3"},
		{"{type: lm_infinite, global: 0, window: 8, cap: 3}", 64, 10, 7, "exact"},
		{"{type: lm_infinite}", 64, 10000, 3, "alt 64"},
		{"{type: lm_infinite}", 64, 10000, 9, "alt 64"},
		{"{type: lm_infinite}", 64, 10000, 10, "masked"},
		{"{type: lm_infinite}", 64, 10000, 9937, "exact"},
		{"{type: lm_infinite}", 64, 10000, 9936, "masked"},
		// streaming: sink k at sinks + window − 1 − k once i ≥ sinks + window, the window exact.
		{"{type: streaming, sinks: 2, window: 4}", 64, 5, 2, "exact"},
		{"{type: streaming, sinks: 2, window: 4}", 64, 5, 0, "exact"}, // the cache not yet full
		{"{type: streaming, sinks: 2, window: 4}", 64, 6, 0, "alt 5"},
		{"{type: streaming, sinks: 2, window: 4}", 64, 6, 1, "alt 4"},
		{"{type: streaming, sinks: 2, window: 4}", 64, 6, 2, "masked"},
		{"{type: streaming, sinks: 2, window: 4}", 64, 6, 3, "exact"},
		{"{type: streaming, sinks: 2, window: 4}", 64, 10000, 3, "masked"},
		{"{type: streaming, sinks: 2, window: 4}", 64, 10000, 0, "alt 5"},
		{"{type: streaming, sinks: 2, window: 4}", 64, 10000, 9997, "exact"},
		{"{type: streaming, sinks: 2, window: 4}", 64, 10000, 9996, "masked"},
		{"{type: streaming, sinks: 0, window: 3}", 64, 10000, 0, "masked"},
		{"{type: streaming}", 64, 10000, 0, "alt 63"}, // 4 sinks, window 60
		{"{type: streaming}", 64, 10000, 3, "alt 60"},
		{"{type: streaming}", 64, 10000, 9941, "exact"},
		{"{type: streaming}", 64, 10000, 9940, "masked"},
		// string: i − j − S + W for i − j ≥ S.
		{"{type: string, shift: 10, window: 2}", 64, 9, 0, "exact"},
		{"{type: string, shift: 10, window: 2}", 64, 10, 0, "alt 2"},
		{"{type: string, shift: 10, window: 2}", 64, 10000, 3, "alt 9989"},
		{"{type: string}", 64, 10000, 3, "alt 9978"},   // S = ⌊0.33·64⌋ = 21, W = 2
		{"{type: string}", 1024, 10000, 3, "alt 9692"}, // S = 337, W = 32
		{"{type: string}", 4, 1, 0, "alt 0"},           // S = 1, W = 0
	} {
		if got := seen(newMap(t, c.section, c.l), c.i, c.j); got != c.want {
			t.Errorf("%s, L = %d: query %d sees key %d as %s, want %s", c.section, c.l, c.i, c.j, got, c.want)
		}
	}
}

// TestDistanceMapSpans checks what every map promises of its spans, at random queries up to far
// past the training length: disjoint and increasing, within [0, i], key i in one and not Alt,
// every key in one unless the map masks, and every Alt distance within [0, i − j], whole for a
// map that applies to biases.
func TestDistanceMapSpans(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	sections := []string{"{type: leaky_rerope, window: 5, k: 3.5}", "{type: self_extend, group: 3, window: 9}",
		"{type: lm_infinite, global: 3, window: 7, cap: 5}", "{type: lm_infinite, global: 20, window: 4, cap: 9}",
		"{type: streaming, sinks: 0, window: 5}", "{type: string, shift: 7, window: 0}",
		"{type: dual_chunk, chunk_size: 10, local_window: 6}", "{type: dual_chunk, chunk_size: 9, local_window: 0}"}
	for _, name := range DistanceMapTypes() {
		sections = append(sections, "{type: "+name+"}")
	}
	for _, section := range sections {
		for _, l := range []int{1, 7, 64, 1000} {
			m := newMap(t, section, l)
			for range 300 {
				i := rng.IntN(20000)
				if rng.IntN(4) == 0 {
					i = rng.IntN(3 * l)
				}
				if err := checkSpans(m, i); err != nil {
					t.Fatalf("%s, L = %d, query %d: %v", section, l, i, err)
				}
			}
		}
	}
}

// TestSelfExtendNeedsWholeGroups shows why self_extend refuses a window that is not a multiple
// of its group: the reference's shift W − ⌊W/G⌋ would then put a key at the window's edge
// farther than it is (G 4, W 6: query 9 and key 3 at 2 + 6 − 1 − 0 = 7 > 6).
func TestSelfExtendNeedsWholeGroups(t *testing.T) {
	if err := checkSpans(SelfExtend{Group: 4, Window: 6}, 9); err == nil || !strings.Contains(err.Error(), "key 3 at distance 7") {
		t.Errorf("G 4, W 6: %v, want key 3 at distance 7 refused", err)
	}
}

func checkSpans(m DistanceMap, i int) error {
	prefix := []Span{{From: -5, To: -1}}
	spans := m.Spans(i, prefix)
	if len(spans) < 2 || spans[0] != prefix[0] {
		return fmt.Errorf("spans %v do not append to dst", spans)
	}
	spans = spans[1:]
	covered, from := 0, 0
	for _, s := range spans {
		if s.From < from || s.To <= s.From {
			return fmt.Errorf("spans %v overlap, are out of order or empty", spans)
		}
		from, covered = s.To, covered+s.To-s.From
		for _, j := range []int{s.From, (s.From + s.To) / 2, s.To - 1} {
			if err := checkAlt(m, s, i, j); err != nil {
				return err
			}
		}
	}
	if last := spans[len(spans)-1]; last.To != i+1 || last.Alt {
		return fmt.Errorf("spans %v: key %d is not in the last, not Alt", spans, i)
	}
	if !MapMasks(m) && covered != i+1 {
		return fmt.Errorf("spans %v: a map that does not mask leaves out keys", spans)
	}
	return nil
}

func checkAlt(m DistanceMap, s Span, i, j int) error {
	if !s.Alt {
		return nil
	}
	d := m.AltQuery(i) - m.AltKey(j)
	if d < -1e-9 || d > float64(i-j)+1e-9 {
		return fmt.Errorf("key %d at distance %g, outside [0, %d]", j, d, i-j)
	}
	if MapsBias(m) && d != math.Trunc(d) {
		return fmt.Errorf("key %d at distance %g, not whole, for a map that applies to biases", j, d)
	}
	return nil
}

func TestDistanceMapBadFields(t *testing.T) {
	for _, c := range []struct {
		section, want string
	}{
		{"{type: nonesuch}", "position.distance_map.type: unknown type \"nonesuch\""},
		{"{type: rerope, window: 0}", "position.distance_map.window: 0, want at least 1"},
		{"{type: rerope, k: 2}", "position.distance_map.k: the rerope distance map does not take k"},
		{"{type: leaky_rerope, k: 0.5}", "position.distance_map.k: 0.5, want a number of at least 1"},
		{"{type: leaky_rerope, window: 2.5}", "position.distance_map.window: 2.5, want a whole number"},
		{"{type: self_extend, group: 0}", "position.distance_map.group: 0, want at least 1"},
		{"{type: self_extend, group: 8, window: 12}", "position.distance_map.window: 12, want a multiple of group 8"},
		{"{type: lm_infinite, global: -1}", "position.distance_map.global: -1, want at least 0"},
		{"{type: lm_infinite, cap: 0}", "position.distance_map.cap: 0, want at least 1"},
		{"{type: lm_infinite, window: 0}", "position.distance_map.window: 0, want at least 1"},
		{"{type: streaming, sinks: -1}", "position.distance_map.sinks: -1, want at least 0"},
		{"{type: streaming, window: 0}", "position.distance_map.window: 0, want at least 1"},
		{"{type: string, shift: 0}", "position.distance_map.shift: 0, want at least 1"},
		{"{type: string, shift: 10, window: 10}", "position.distance_map.window: 10, want at least 0 and below shift 10"},
		{"{type: string, window: x}", "position.distance_map.window: cannot unmarshal"},
		{"{type: dual_chunk, chunk_size: 0}", "position.distance_map.chunk_size: 0, want at least 1"},
		{"{type: dual_chunk, chunk_size: 8, local_window: 8}", "position.distance_map.local_window: 8, want at least 0 and below chunk_size 8"},
		{"{type: dual_chunk, local_window: -1}", "position.distance_map.local_window: -1, want at least 0"},
		{"[rerope]", "position.distance_map: want a section of fields"},
	} {
		var c2 Config
		err := yaml.Unmarshal([]byte("{scheme: rope, distance_map: "+c.section+"}"), &c2)
		if err == nil {
			_, err = New(Spec{DModel: 8, Heads: 2, Layers: 2, TrainLen: 64, Config: c2})
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.section, err, c.want)
		}
	}
}

// TestDistanceMapRoundTrip checks that a section with a distance map and a window reads back as
// it was written, and that one without them is written as before.
func TestDistanceMapRoundTrip(t *testing.T) {
	for _, doc := range []string{
		"scheme: rope\nbase: 500\nwindow: 32\nscaling:\n    type: ntk\n    factor: 2\ndistance_map:\n    type: self_extend\n    group: 4\n    window: 8\n",
		"scheme: rope\nbase: 500\n",
	} {
		c := fromYAML(t, doc)
		out, err := yaml.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		if string(out) != doc {
			t.Errorf("read\n%s\nwritten back as\n%s", doc, out)
		}
	}
}

// TestMapAppliesTo checks which schemes take which maps: rotary ones every map, distance biases
// the maps that say so, NoPE and FoX's forget gates the maps that mask, absolute and per-query
// positions, stick-breaking none, nor contextual ones (CoPE), in any layer.
func TestMapAppliesTo(t *testing.T) {
	all := DistanceMapTypes()
	takes := map[string][]string{
		"rope": all, "xpos": all, "{layers: [rope, nope]}": all,
		"alibi": {"lm_infinite", "streaming"}, "t5": {"lm_infinite", "streaming"}, "kerple": {"lm_infinite", "streaming"},
		"nope": {"lm_infinite", "streaming"}, "{layers: [nope, alibi]}": {"lm_infinite", "streaming"},
		"fox": {"lm_infinite", "streaming"}, "{layers: [rope, fox]}": all,
		"stickbreaking": nil, "{layers: [rope, stickbreaking]}": nil,
		"cope": nil, "{layers: [rope, cope]}": nil,
		"fire": nil, "learned": nil, "sinusoidal": nil,
	}
	for scheme, want := range takes {
		doc := "{scheme: " + scheme + "}"
		if strings.HasPrefix(scheme, "{") {
			doc = scheme
		}
		s, err := New(Spec{DModel: 8, Heads: 2, Layers: 2, TrainLen: 64, Config: fromYAML(t, doc)})
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range all {
			err := MapAppliesTo(newMap(t, "{type: "+name+"}", 64), s)
			if ok := slices.Contains(want, name); ok != (err == nil) || err != nil && !strings.HasPrefix(err.Error(), "position.distance_map: ") {
				t.Errorf("%s with %s: %v, want taken %v", scheme, name, err, ok)
			}
		}
	}
	_, err := New(Spec{DModel: 8, Heads: 2, Layers: 2, TrainLen: 64, Config: fromYAML(t, "{scheme: alibi, distance_map: {type: rerope}}")})
	if want := "position.distance_map: the rerope distance map applies to rotary schemes only"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("alibi with rerope: %v, want %q", err, want)
	}
	_, err = New(Spec{DModel: 8, Heads: 2, Layers: 2, TrainLen: 64, Config: fromYAML(t, "{layers: [{scheme: rope, distance_map: {type: rerope}}]}")})
	if want := "position.layers[0]: a distance map applies to the whole model"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("a distance map in a slot: %v, want %q", err, want)
	}
}
