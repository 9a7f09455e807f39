package data

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"extrapolate/internal/rng"
)

func TestPasskeyDoc(t *testing.T) {
	filler := []byte(strings.Repeat("abcdefghij", 10))
	for _, c := range []struct {
		n     int
		depth float64
		want  string
	}{
		// 64+1 bytes: 46 of filler, the needle after depth·46 of them.
		{64, 0, "key@04217." + string(filler[:46]) + "key@04217"},
		{64, 1, string(filler[:46]) + "key@04217.key@04217"},
		{64, 0.5, string(filler[:23]) + "key@04217." + string(filler[23:46]) + "key@04217"},
	} {
		doc := make([]byte, c.n+1)
		if err := PasskeyDoc(doc, filler, 4217, c.depth); err != nil {
			t.Fatal(err)
		}
		if string(doc) != c.want {
			t.Errorf("depth %g:\n got %q\nwant %q", c.depth, doc, c.want)
		}
	}
	doc := make([]byte, 65)
	for _, bad := range []struct {
		filler []byte
		key    int
		depth  float64
	}{{filler[:10], 1, 0}, {filler, -1, 0}, {filler, 100000, 0}, {filler, 1, 1.5}, {filler, 1, -0.1}} {
		if err := PasskeyDoc(doc, bad.filler, bad.key, bad.depth); err == nil {
			t.Errorf("%d bytes of filler, key %d, depth %g: no error", len(bad.filler), bad.key, bad.depth)
		}
	}
}

var docRE = regexp.MustCompile(`key@(\d{5})\.(?s:.*)key@(\d{5})$`)

// TestSamplerPasskeyMix checks that about the asked fraction of training windows are passkey
// documents, each well formed with a key never held out, and that without passkeys the sampler
// draws exactly the windows it drew before they existed.
func TestSamplerPasskeyMix(t *testing.T) {
	text := []byte(strings.Repeat("func f(x int) int { return x + 1 }\n", 200))
	const n, windows = 64, 4000
	ids, targets := make([]int, n*windows), make([]int, n*windows)

	plain := NewSampler(text, 3)
	if err := plain.Fill(ids, targets, n); err != nil {
		t.Fatal(err)
	}
	g := rng.SplitMix64{State: 3}
	for b := 0; b < windows; b++ {
		off := int(g.Next() % uint64(len(text)-n-1))
		if ids[b*n] != int(text[off]) || targets[b*n+n-1] != int(text[off+n]) {
			t.Fatalf("window %d is not the text at offset %d", b, off)
		}
	}

	s := NewSampler(text, 3)
	s.Passkey = 0.3
	if err := s.Fill(ids, targets, n); err != nil {
		t.Fatal(err)
	}
	docs := 0
	for b := 0; b < windows; b++ {
		w := []byte{byte(ids[b*n])}
		for _, x := range targets[b*n : (b+1)*n] {
			w = append(w, byte(x))
		}
		m := docRE.FindSubmatch(w)
		if m == nil {
			continue
		}
		docs++
		if !bytes.Equal(m[1], m[2]) {
			t.Fatalf("window %d: needle %s, answer %s", b, m[1], m[2])
		}
		key, err := strconv.Atoi(string(m[2]))
		if err != nil {
			t.Fatal(err)
		}
		if HeldOutKey(key) {
			t.Fatalf("window %d: training used held-out key %05d", b, key)
		}
	}
	// Binomial(4000, 0.3): mean 1200, standard deviation 29; 5 deviations either way.
	if docs < 1055 || docs > 1345 {
		t.Fatalf("%d of %d windows are passkey documents, want about 30%%", docs, windows)
	}
}

func TestPasskeyCasesHeldOut(t *testing.T) {
	valid := []byte(strings.Repeat("package main\n\nfunc main() {}\n", 100))
	depths := []float64{0, 0.5, 1}
	cases, err := PasskeyCases(valid, 128, depths, 20)
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) != 60 {
		t.Fatalf("%d cases, want 60", len(cases))
	}
	for i, c := range cases {
		if c.Depth != depths[i/20] || !HeldOutKey(c.Key) || len(c.Doc) != 129 {
			t.Fatalf("case %d: depth %g, key %05d (held out %v), %d bytes", i, c.Depth, c.Key, HeldOutKey(c.Key), len(c.Doc))
		}
		m := docRE.FindSubmatch(c.Doc)
		if m == nil || string(m[2]) != fmt.Sprintf("%05d", c.Key) {
			t.Fatalf("case %d: %q is not a document for key %05d", i, c.Doc, c.Key)
		}
		// The filler is validation text: what is left without needle, question and answer.
		rest := bytes.Replace(c.Doc[:len(c.Doc)-PasskeyDigits-len(passkeyQuestion)], m[1], nil, 1)
		rest = bytes.Replace(rest, []byte("key@."), nil, 1)
		if !bytes.Contains(valid, rest) {
			t.Fatalf("case %d: filler %q is not validation text", i, rest)
		}
	}
	again, _ := PasskeyCases(valid, 128, depths, 20)
	for i := range cases {
		if !bytes.Equal(cases[i].Doc, again[i].Doc) {
			t.Fatal("two calls gave different documents")
		}
	}
	// About one key in ten is held out.
	held := 0
	for k := range passkeyKeys {
		if HeldOutKey(k) {
			held++
		}
	}
	if held < 9000 || held > 11000 {
		t.Fatalf("%d of %d keys held out, want about a tenth", held, passkeyKeys)
	}
	if _, err := PasskeyCases(valid, PasskeyMinLen-1, depths, 1); err == nil {
		t.Fatal("a window too short for a document was accepted")
	}
}
