package data

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestGoSourceCorpus(t *testing.T) {
	c, err := loadGoSource()
	if err != nil {
		t.Fatal(err)
	}
	if c.Files < 100 || len(c.Valid) < 100000 || len(c.Train) < 8*len(c.Valid) {
		t.Fatalf("%d files, %d train and %d validation bytes: the split looks wrong", c.Files, len(c.Train), len(c.Valid))
	}
	// A fixed order: loading again gives the same bytes.
	d, err := loadGoSource()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(c.Train, d.Train) || !bytes.Equal(c.Valid, d.Valid) {
		t.Fatal("two loads differ")
	}
	if !strings.Contains(c.Source, "go1.") {
		t.Fatalf("source %q does not name the Go version", c.Source)
	}
	// Go source is far from uniform: its byte entropy is well below ln(256).
	if h := c.UnigramEntropy(); !(h > 2 && h < 5) {
		t.Fatalf("unigram entropy %.3f nats", h)
	}
}

func TestTextCorpus(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "t.txt")
	os.WriteFile(path, []byte(strings.Repeat("0123456789", 10)), 0o644)
	c, err := loadText(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Train) != 90 || len(c.Valid) != 10 {
		t.Fatalf("split %d/%d, want 90/10", len(c.Train), len(c.Valid))
	}
	for name, body := range map[string]string{"empty": "", "binary": "\x00\x01\x02", "latin1": strings.Repeat("\xe9\xe8\xff", 100)} {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(body), 0o644)
		if _, err := loadText(p); err == nil || !strings.Contains(err.Error(), "data.path") {
			t.Errorf("%s: %v, want an error naming data.path", name, err)
		}
	}
	if _, err := loadText(filepath.Join(dir, "none")); err == nil {
		t.Error("a missing file loaded")
	}
	if _, err := loadText(dir); err == nil {
		t.Error("a folder loaded")
	}
}

func TestUnigramEntropy(t *testing.T) {
	c := &Corpus{Train: []byte("aabb")}
	if h := c.UnigramEntropy(); math.Abs(h-math.Log(2)) > 1e-12 {
		t.Fatalf("entropy of aabb = %g, want ln 2", h)
	}
}

func TestSampler(t *testing.T) {
	text := []byte("abcdefghijklmnopqrstuvwxyz")
	s := NewSampler(text, 7)
	ids, targets := make([]int, 12), make([]int, 12)
	if err := s.Fill(ids, targets, 4); err != nil {
		t.Fatal(err)
	}
	for b := 0; b < 3; b++ {
		for i := 0; i < 4; i++ {
			if targets[b*4+i] != ids[b*4+i]+1 {
				t.Fatalf("window %d: target %d does not follow token %d", b, targets[b*4+i], ids[b*4+i])
			}
		}
	}
	// Same seed, same windows: the state is all there is.
	s2 := NewSampler(text, 7)
	ids2, targets2 := make([]int, 12), make([]int, 12)
	s2.Fill(ids2, targets2, 4)
	for i := range ids {
		if ids[i] != ids2[i] {
			t.Fatal("same seed, different windows")
		}
	}
	if err := NewSampler([]byte("ab"), 1).Fill(ids, targets, 4); err == nil {
		t.Fatal("a text shorter than a window was sampled")
	}
}

// FuzzWindows checks the evaluation windows on any text: every target is scored exactly once,
// each window lies inside the evaluation tokens, and the tokens filled in are the text's bytes
// (the byte-level tokenizer: token t is byte t), each target the byte after its input.
func FuzzWindows(f *testing.F) {
	f.Add([]byte("func main() {}\n"), uint8(4), uint8(4))
	f.Add([]byte{0, 255, 128, 10, 7, 7, 7}, uint8(3), uint8(1))
	f.Add([]byte("héllo, 世界, héllo"), uint8(5), uint8(2))
	f.Fuzz(func(t *testing.T, text []byte, n8, stride8 uint8) {
		tokens := len(text) - 1
		n, stride := int(n8), int(stride8)
		if tokens < 1 || n < 1 || n > tokens || stride < 1 || stride > n {
			return
		}
		set, err := NewEvalSet(text, tokens)
		if err != nil {
			t.Fatal(err)
		}
		ws, err := set.Plan(n, stride)
		if err != nil {
			t.Fatal(err)
		}
		scored := make([]int, tokens)
		ids, targets := make([]int, len(ws)*n), make([]int, len(ws)*n)
		set.FillWindows(ids, targets, n, ws)
		for b, w := range ws {
			if w.Start < 0 || w.Start+n > tokens || w.Score < 1 || w.Score > n {
				t.Fatalf("window %+v of %d outside %d tokens", w, n, tokens)
			}
			for i := n - w.Score; i < n; i++ {
				scored[w.Start+i]++
			}
			for i := 0; i < n; i++ {
				id, target := ids[b*n+i], targets[b*n+i]
				if id != int(text[w.Start+i]) || target != int(text[w.Start+i+1]) || id >= Vocab || target >= Vocab {
					t.Fatalf("window %+v position %d: token %d target %d, want bytes %d %d", w, i, id, target, text[w.Start+i], text[w.Start+i+1])
				}
			}
		}
		for i, c := range scored {
			if c != 1 {
				t.Fatalf("target %d scored %d times (n %d, stride %d, %d tokens)", i, c, n, stride, tokens)
			}
		}
	})
}

// TestIsTextWholeFile checks that binary data anywhere in a corpus is found, not only in its
// first block, and that a few stray bytes in text are not.
func TestIsTextWholeFile(t *testing.T) {
	text := []byte(strings.Repeat("func f(x int) int { return x * 2 }\n", 5000))
	withStray := append(append([]byte(nil), text...), 0xff, 0xfe)
	cases := []struct {
		name string
		b    []byte
		ok   bool
	}{
		{"text", text, true},
		{"short text", []byte("hello\n"), true},
		{"stray bytes", withStray, true},
		{"NULs at the end", append(append([]byte(nil), text...), make([]byte, 100<<10)...), false},
		{"one NUL in the middle", append(append(append([]byte(nil), text[:100000]...), 0), text[100000:]...), false},
	}
	random := make([]byte, 200<<10)
	x := uint32(1)
	for i := range random {
		x = x*1664525 + 1013904223
		random[i] = byte(x >> 24)
	}
	cases = append(cases, struct {
		name string
		b    []byte
		ok   bool
	}{"random bytes after text", append(append([]byte(nil), text...), random...), false})
	for _, c := range cases {
		if _, ok := isText(c.b); ok != c.ok {
			t.Errorf("%s: isText = %v, want %v", c.name, ok, c.ok)
		}
	}
}
