package position

import (
	"math"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"extrapolate/internal/rng"
)

// idsFrom reads a train.positions section from YAML and resolves it for windows of n.
func idsFrom(t *testing.T, src string, n int) (*IDs, error) {
	t.Helper()
	var c IDsConfig
	if err := yaml.Unmarshal([]byte(src), &c); err != nil {
		return nil, err
	}
	return c.Resolve(n)
}

func mustIDs(t *testing.T, src string, n int) *IDs {
	t.Helper()
	ids, err := idsFrom(t, src, n)
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

// The first three numbers of SplitMix64 from seed 0 (Vigna's reference, internal/rng's test):
// a = 0xe220a8397b1dcdaf, b = 0x6e789e6aa1b965f4, c = 0x06c45d188009454f. The residues the tests
// below need follow from their hexadecimal digits: modulo 15 (16 ≡ 1) a number is its digits'
// sum, modulo 17 (16 ≡ −1) their alternating sum from the last, and modulo 4 and 16 its last
// digit.

// TestRandomizedFirstDraw follows Floyd's draw of 3 positions of 17 by hand from seed 0: for
// j = 14, t = a mod 15 = 130 mod 15 = 10, taken; j = 15, t = b mod 16 = 4, taken; j = 16,
// t = c mod 17 = 26 mod 17 = 9, taken: the ids 4, 9, 10. And 2 of 5: j = 3, t = a mod 4 = 3;
// j = 4, t = b mod 5 = 0 (b = 7960286522194355700): the ids 0, 3.
func TestRandomizedFirstDraw(t *testing.T) {
	for _, c := range []struct {
		l    int
		want []int
	}{{17, []int{4, 9, 10}}, {5, []int{0, 3}}} {
		ids := mustIDs(t, "{type: randomized, noise_max_length: "+itoa(c.l)+"}", len(c.want))
		got := make([]int, len(c.want))
		ids.Draw(&rng.SplitMix64{}, got)
		if !equalInts(got, c.want) {
			t.Errorf("%d of %d from seed 0: %v, want %v", len(c.want), c.l, got, c.want)
		}
	}
}

// TestRandomizedDraws checks the ids' distribution, as the reference code's choice without
// replacement and sort give it: every draw n distinct positions of [0, L) in increasing order;
// each position drawn with probability n/L; and the k-th smallest (k from 1) of a uniform
// n-subset of {1, …, L} has mean k·(L+1)/(n+1), so of [0, L) one less. With n = 8, L = 32 the
// k-th id's standard deviation is at most 4.6 (k(n−k+1)(L+1)(L−n)/((n+1)²(n+2)) ≤ 20·33·24/810),
// so over 20,000 draws its mean is within 0.15 (about 5 standard errors).
func TestRandomizedDraws(t *testing.T) {
	const n, l, draws = 8, 32, 20000
	ids := mustIDs(t, "{type: randomized, noise_max_length: 32}", n)
	if ids.Range != l || ids.RangeField != "train.positions.noise_max_length" {
		t.Fatalf("range %d from %s", ids.Range, ids.RangeField)
	}
	g := &rng.SplitMix64{State: 7}
	sum := make([]float64, n)
	hits := make([]int, l)
	x := make([]int, n)
	for range draws {
		ids.Draw(g, x)
		for k, p := range x {
			if p < 0 || p >= l || k > 0 && p <= x[k-1] {
				t.Fatalf("draw %v: not increasing strictly within [0, %d)", x, l)
			}
			sum[k] += float64(p)
			hits[p]++
		}
	}
	for k := range sum {
		want := float64((k+1)*(l+1))/float64(n+1) - 1
		if got := sum[k] / draws; math.Abs(got-want) > 0.15 {
			t.Errorf("id %d: mean %.3f, want %.3f", k, got, want)
		}
	}
	// Each position is drawn with probability 1/4: 5,000 times, standard deviation 61.
	for p, h := range hits {
		if math.Abs(float64(h)-draws*n/l) > 300 {
			t.Errorf("position %d drawn %d times in %d draws, want about %d", p, h, draws, draws*n/l)
		}
	}
	// A range as long as the window leaves one draw: 0..n−1.
	all := mustIDs(t, "{type: randomized, noise_max_length: 8}", n)
	all.Draw(g, x)
	if !equalInts(x, []int{0, 1, 2, 3, 4, 5, 6, 7}) {
		t.Errorf("8 of 8: %v", x)
	}
}

// TestPoSEFirstDraw follows train_pose.py's draw for a window of 8 and a target of 24 by hand
// from seed 0: the first chunk's length randint(1, (8+1)//2 = 4) = 1 + a mod 4 = 1 + 3 = 4, the
// skip randint(0, 24 − 8 = 16) = b mod 17 = −5 mod 17 = 12: the ids 0, 1, 2, 3, then 4..7 moved
// on by 12, 16..19.
func TestPoSEFirstDraw(t *testing.T) {
	ids := mustIDs(t, "{type: pose, scaled_max_position_embeddings: 24}", 8)
	got := make([]int, 8)
	ids.Draw(&rng.SplitMix64{}, got)
	if want := []int{0, 1, 2, 3, 16, 17, 18, 19}; !equalInts(got, want) {
		t.Errorf("from seed 0: %v, want %v", got, want)
	}
}

// chunksOf splits ids into their runs of consecutive positions, by length, with the skip before
// each: ids[first] − first, the chunk's u_i.
func chunksOf(ids []int) (lengths, skips []int) {
	for k, p := range ids {
		if k == 0 || p != ids[k-1]+1 {
			lengths, skips = append(lengths, 0), append(skips, p-k)
		}
		lengths[len(lengths)-1]++
	}
	return lengths, skips
}

// TestPoSEDraws checks the chunks' structure and distribution for a window of n = 8 and a target
// of L_t = 20: the first chunk starts at 0; there are at most as many runs as chunks (a skip of
// 0 joins two); the skips do not decrease and the last id is n − 1 + the last skip, at most
// L_t − 1. With 2 chunks (train_pose.py) the first chunk's length is uniform on 1..4, mean 2.5,
// each 1/4, and the skip on 0..12, mean 6. With 3 (the paper's Figure 6) the first length is
// uniform on 1..6, mean 3.5, the first skip on 0..12, mean 6, and the second on u_1..12, mean
// E[(u_1 + 12)/2] = 9. Over 20,000 draws the means are within 0.15 (the skips' standard
// deviations are below 4, the lengths' below 2: 5 standard errors at most 0.15).
func TestPoSEDraws(t *testing.T) {
	const n, lt, draws = 8, 20, 20000
	for _, c := range []struct {
		chunks              int
		firstLen, firstSkip float64 // their means, given a skip that shows the first chunk
		lastSkip            float64
		longestFirst        int
	}{{2, 2.5, 6, 6, 4}, {3, 3.5, 6, 9, 6}} {
		ids := mustIDs(t, "{type: pose, scaled_max_position_embeddings: 20, chunks: "+itoa(c.chunks)+"}", n)
		if ids.Range != lt {
			t.Fatalf("range %d", ids.Range)
		}
		g := &rng.SplitMix64{State: 11}
		x := make([]int, n)
		var firstLen, firstSkip, lastSkip float64
		shown := 0
		lens := map[int]int{}
		for range draws {
			ids.Draw(g, x)
			lengths, skips := chunksOf(x)
			if skips[0] != 0 || len(lengths) > c.chunks || x[n-1] > lt-1 {
				t.Fatalf("%d chunks: draw %v: runs %v after skips %v", c.chunks, x, lengths, skips)
			}
			for i := 1; i < len(skips); i++ {
				if skips[i] <= skips[i-1] {
					t.Fatalf("%d chunks: draw %v: skips %v decrease", c.chunks, x, skips)
				}
			}
			lastSkip += float64(x[n-1] - (n - 1))
			// The first chunk shows when the skip after it is not 0, which is independent of
			// its length; its skip is then the second run's.
			if len(lengths) > 1 && (c.chunks == 2 || len(lengths) == 3) {
				shown++
				firstLen += float64(lengths[0])
				firstSkip += float64(skips[1])
				lens[lengths[0]]++
			}
		}
		if got := lastSkip / draws; math.Abs(got-c.lastSkip) > 0.15 {
			t.Errorf("%d chunks: last skip's mean %.3f, want %.3f", c.chunks, got, c.lastSkip)
		}
		if got := firstLen / float64(shown); math.Abs(got-c.firstLen) > 0.15 {
			t.Errorf("%d chunks: first chunk's mean length %.3f, want %.3f", c.chunks, got, c.firstLen)
		}
		for l := range lens {
			if l < 1 || l > c.longestFirst {
				t.Errorf("%d chunks: a first chunk of %d, want 1 to %d", c.chunks, l, c.longestFirst)
			}
		}
		if c.chunks == 2 {
			if got := firstSkip / float64(shown); math.Abs(got-(1+12)/2.0) > 0.15 {
				// Given a skip above 0 it is uniform on 1..12.
				t.Errorf("2 chunks: skip's mean %.3f given one, want 6.5", got)
			}
		}
	}
	// One chunk, or a target as long as the window, leaves 0..n−1.
	for _, src := range []string{"{type: pose, scaled_max_position_embeddings: 20, chunks: 1}", "{type: pose, scaled_max_position_embeddings: 8}"} {
		x := make([]int, n)
		mustIDs(t, src, n).Draw(&rng.SplitMix64{State: 3}, x)
		if !equalInts(x, []int{0, 1, 2, 3, 4, 5, 6, 7}) {
			t.Errorf("%s: %v", src, x)
		}
	}
}

// TestIDsConfigErrors checks that a bad train.positions section is one line naming its field.
func TestIDsConfigErrors(t *testing.T) {
	for src, field := range map[string]string{
		"{type: shuffled}":                                              "train.positions.type",
		"{type: randomized}":                                            "train.positions.noise_max_length",
		"{type: randomized, noise_max_length: 64}":                      "",
		"{type: randomized, noise_max_length: 63}":                      "train.positions.noise_max_length",
		"{type: randomized, noise_max_length: 2000000}":                 "train.positions.noise_max_length",
		"{type: randomized, noise_max_length: 64.5}":                    "train.positions.noise_max_length",
		"{type: randomized, max_len: 256}":                              "train.positions.max_len",
		"{type: pose}":                                                  "train.positions.scaled_max_position_embeddings",
		"{type: pose, scaled_max_position_embeddings: 256, chunks: 0}":  "train.positions.chunks",
		"{type: pose, scaled_max_position_embeddings: 256, chunks: 65}": "train.positions.chunks",
		"{type: pose, scaled_max_position_embeddings: 256, chunks: 64}": "",
		"{type: randomized, noise_max_length: 256, type: pose}":         "train.positions.type",
		"[randomized]": "train.positions",
	} {
		_, err := idsFrom(t, src, 64)
		switch {
		case field == "" && err != nil:
			t.Errorf("%s: %v", src, err)
		case field == "":
		case err == nil:
			t.Errorf("%s: no error, want one naming %s", src, field)
		case !strings.HasPrefix(err.Error(), field+":") || strings.Contains(err.Error(), "\n"):
			t.Errorf("%s: %q, want one line naming %s", src, err, field)
		}
	}
}

// TestIDsConfigRoundTrips checks that the section marshals back as given, for a config's hash.
func TestIDsConfigRoundTrips(t *testing.T) {
	var c IDsConfig
	if err := yaml.Unmarshal([]byte("{type: pose, scaled_max_position_embeddings: 256, chunks: 2}"), &c); err != nil {
		t.Fatal(err)
	}
	b, err := yaml.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	if want := "type: pose\nchunks: 2\nscaled_max_position_embeddings: 256\n"; string(b) != want {
		t.Fatalf("%q, want %q", b, want)
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func itoa(n int) string {
	b, _ := yaml.Marshal(n)
	return strings.TrimSpace(string(b))
}
