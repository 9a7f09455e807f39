package checkpoint

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gorgonia.org/tensor"
)

type meta struct {
	Step int    `json:"step"`
	Note string `json:"note"`
}

func sample() []Tensor {
	rng := rand.New(rand.NewPCG(1, 2))
	a := make([]float32, 12)
	for i := range a {
		a[i] = rng.Float32()
	}
	b := []float64{1.5, -2.25, 3}
	return []Tensor{
		{Name: "w", Value: tensor.New(tensor.WithShape(3, 4), tensor.WithBacking(a))},
		{Name: "b", Value: tensor.New(tensor.WithShape(3), tensor.WithBacking(b))},
	}
}

func TestRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.ckpt")
	if err := Write(path, meta{Step: 7, Note: "hello"}, sample()); err != nil {
		t.Fatal(err)
	}
	var m meta
	ts, err := Read(path, &m)
	if err != nil {
		t.Fatal(err)
	}
	if m.Step != 7 || m.Note != "hello" || len(ts) != 2 {
		t.Fatalf("meta %+v, %d tensors", m, len(ts))
	}
	want := sample()
	for i := range want {
		if ts[i].Name != want[i].Name || !ts[i].Value.Shape().Eq(want[i].Value.Shape()) || !bytes.Equal(ts[i].Value.Raw, want[i].Value.Raw) {
			t.Fatalf("tensor %d differs", i)
		}
	}
}

// TestEveryCorruptionDetected truncates the file at every length and flips every bit of every
// byte: each must be an error, never a panic, never a silent success.
func TestEveryCorruptionDetected(t *testing.T) {
	good, err := encode(meta{Step: 3}, sample())
	if err != nil {
		t.Fatal(err)
	}
	try := func(b []byte) error {
		_, err := decode(bytes.NewReader(b), int64(len(b)), &meta{})
		return err
	}
	if err := try(good); err != nil {
		t.Fatalf("the good file: %v", err)
	}
	for n := 0; n < len(good); n++ {
		if err := try(good[:n]); err == nil {
			t.Fatalf("truncated to %d of %d bytes: no error", n, len(good))
		}
	}
	for i := range good {
		for bit := 0; bit < 8; bit++ {
			b := append([]byte(nil), good...)
			b[i] ^= 1 << bit
			if err := try(b); err == nil {
				t.Fatalf("bit %d of byte %d flipped: no error", bit, i)
			}
		}
	}
	if err := try(append(append([]byte(nil), good...), 0)); err == nil {
		t.Fatal("a byte appended: no error")
	}
}

// craft builds a file with a valid checksum around any header, as an attacker could.
func craft(version uint32, header string, payload []byte) []byte {
	var b bytes.Buffer
	b.WriteString(magic)
	binary.Write(&b, binary.LittleEndian, version)
	binary.Write(&b, binary.LittleEndian, uint32(len(header)))
	b.WriteString(header)
	b.Write(payload)
	sum := sha256Sum(b.Bytes())
	b.Write(sum)
	return b.Bytes()
}

func TestHostileHeaders(t *testing.T) {
	cases := map[string][]byte{
		"huge shape":        craft(Version, `{"meta":{},"tensors":[{"name":"w","dtype":"float32","shape":[1000000000,1000000000]}]}`, nil),
		"overflowing shape": craft(Version, `{"meta":{},"tensors":[{"name":"w","dtype":"float64","shape":[4294967296,4294967296,4294967296]}]}`, nil),
		"negative dim":      craft(Version, `{"meta":{},"tensors":[{"name":"w","dtype":"float32","shape":[-4]}]}`, make([]byte, 16)),
		"zero dim":          craft(Version, `{"meta":{},"tensors":[{"name":"w","dtype":"float32","shape":[0]}]}`, nil),
		"many dims":         craft(Version, `{"meta":{},"tensors":[{"name":"w","dtype":"float32","shape":[1,1,1,1,1,1,1,1,1,1]}]}`, make([]byte, 4)),
		"bad dtype":         craft(Version, `{"meta":{},"tensors":[{"name":"w","dtype":"int8","shape":[4]}]}`, make([]byte, 4)),
		"short payload":     craft(Version, `{"meta":{},"tensors":[{"name":"w","dtype":"float32","shape":[4]}]}`, make([]byte, 8)),
		"long payload":      craft(Version, `{"meta":{},"tensors":[{"name":"w","dtype":"float32","shape":[1]}]}`, make([]byte, 8)),
		"not json":          craft(Version, `{"meta":`, nil),
		"other version":     craft(Version+1, `{"meta":{},"tensors":[]}`, nil),
		"bad magic":         append([]byte("NOTACKPT"), craft(Version, `{}`, nil)[8:]...),
	}
	for name, b := range cases {
		_, err := decode(bytes.NewReader(b), int64(len(b)), &meta{})
		if err == nil {
			t.Errorf("%s: no error", name)
			continue
		}
		if name == "other version" && !strings.Contains(err.Error(), "version") {
			t.Errorf("%s: %v, want it to name the version", name, err)
		}
		if name != "other version" && !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: %v, want ErrCorrupt", name, err)
		}
	}
}

func TestReadErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := Read(filepath.Join(dir, "missing.ckpt"), nil); err == nil || !strings.Contains(err.Error(), "missing.ckpt") {
		t.Fatalf("missing file: %v", err)
	}
	if _, err := Read(dir, nil); err == nil {
		t.Fatal("a folder read as a checkpoint")
	}
	empty := filepath.Join(dir, "empty.ckpt")
	os.WriteFile(empty, nil, 0o644)
	if _, err := Read(empty, nil); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("empty file: %v", err)
	}
}

func FuzzDecode(f *testing.F) {
	good, _ := encode(meta{Step: 3, Note: "seed"}, sample())
	f.Add(good)
	f.Add(good[:len(good)/2])
	f.Add(craft(Version, `{"meta":{},"tensors":[{"name":"w","dtype":"float32","shape":[1000000000]}]}`, nil))
	f.Add([]byte(magic))
	f.Fuzz(func(t *testing.T, b []byte) {
		ts, err := decode(bytes.NewReader(b), int64(len(b)), &meta{})
		if err != nil {
			return
		}
		// Whatever decodes must re-encode to the same bytes: nothing was misread.
		var m meta
		decode(bytes.NewReader(b), int64(len(b)), &m)
		again, err := encode(m, ts)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := decode(bytes.NewReader(again), int64(len(again)), &meta{}); err != nil {
			t.Fatalf("re-encoded file does not decode: %v", err)
		}
	})
}

func sha256Sum(b []byte) []byte {
	s := sha256.Sum256(b)
	return s[:]
}

// TestReadSum checks that ReadSum returns the checksum closing the file, the SHA-256 of all
// before it, and that checkpoints of other content have other sums.
func TestReadSum(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.ckpt"), filepath.Join(dir, "b.ckpt")
	if err := Write(a, meta{Step: 1}, sample()); err != nil {
		t.Fatal(err)
	}
	if err := Write(b, meta{Step: 2}, sample()); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(a)
	var m meta
	ts, sa, err := ReadSum(a, &m)
	if err != nil || len(ts) != 2 || m.Step != 1 {
		t.Fatalf("%d tensors, meta %+v: %v", len(ts), m, err)
	}
	if want := sha256.Sum256(raw[:len(raw)-sha256.Size]); sa != want || !bytes.Equal(sa[:], raw[len(raw)-sha256.Size:]) {
		t.Fatalf("sum %x, want %x", sa, want)
	}
	if _, sb, err := ReadSum(b, nil); err != nil || sb == sa {
		t.Fatalf("another checkpoint's sum %x (%v), the first's %x", sb, err, sa)
	}
	if _, sum, err := ReadSum(filepath.Join(dir, "missing.ckpt"), nil); err == nil || sum != [sha256.Size]byte{} {
		t.Fatalf("a missing file: sum %x, error %v", sum, err)
	}
}
