package safetensors

import (
	"bytes"
	"encoding/binary"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// golden is the format's spec applied by hand to a float32 vector a = [1, -2], a float64
// scalar b = 0.5 and the metadata k: v: the 132-byte header padded with 4 spaces to 136
// (0x88), then the elements' little-endian bits.
var golden = []byte("\x88\x00\x00\x00\x00\x00\x00\x00" +
	`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F64","shape":[],"data_offsets":[8,16]},"__metadata__":{"k":"v"}}    ` +
	"\x00\x00\x80\x3f" + "\x00\x00\x00\xc0" + // 1.0f, -2.0f
	"\x00\x00\x00\x00\x00\x00\xe0\x3f") // 0.5

func goldenTensors() []Tensor {
	return []Tensor{F32("a", []int{2}, []float32{1, -2}), F64("b", nil, []float64{0.5})}
}

func TestEncodeGolden(t *testing.T) {
	got, err := Encode(goldenTensors(), map[string]string{"k": "v"})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, golden) {
		t.Fatalf("Encode:\n%q\nwant\n%q", got, golden)
	}
}

func TestDecodeGolden(t *testing.T) {
	ts, meta, err := Decode(golden)
	if err != nil {
		t.Fatal(err)
	}
	if len(ts) != 2 || ts[0].Name != "a" || ts[1].Name != "b" || !reflect.DeepEqual(meta, map[string]string{"k": "v"}) {
		t.Fatalf("Decode: %+v, %v", ts, meta)
	}
	if got := ts[0].Float64s(); !reflect.DeepEqual(got, []float64{1, -2}) || !reflect.DeepEqual(ts[0].Shape, []int{2}) {
		t.Errorf("a: %v %v", got, ts[0].Shape)
	}
	if got := ts[1].Float64s(); !reflect.DeepEqual(got, []float64{0.5}) || len(ts[1].Shape) != 0 {
		t.Errorf("b: %v %v", got, ts[1].Shape)
	}
}

// TestRoundTrip encodes tensors of several shapes and reads them back, in their order, with
// an aligned buffer.
func TestRoundTrip(t *testing.T) {
	in := []Tensor{
		F32("h0.wq", []int{3, 2}, []float32{1, 2, 3, 4, 5, 6}),
		F64("ssmax", []int{2}, []float64{0.25, -1e300}),
		F32("empty", []int{0, 4}, nil),
		F32("tail", []int{1, 1, 3}, []float32{7, 8, 9}),
	}
	b, err := Encode(in, nil)
	if err != nil {
		t.Fatal(err)
	}
	if n := binary.LittleEndian.Uint64(b); n%8 != 0 {
		t.Errorf("header of %d bytes, not a multiple of 8", n)
	}
	out, meta, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if meta != nil {
		t.Errorf("metadata %v, want none", meta)
	}
	if len(out) != len(in) {
		t.Fatalf("%d tensors back, want %d", len(out), len(in))
	}
	for i := range in {
		if out[i].Name != in[i].Name || out[i].Dtype != in[i].Dtype || !reflect.DeepEqual(out[i].Shape, in[i].Shape) || !bytes.Equal(out[i].Data, in[i].Data) {
			t.Errorf("tensor %d: %+v, want %+v", i, out[i], in[i])
		}
	}
}

func TestEncodeRefuses(t *testing.T) {
	a := F32("a", []int{2}, []float32{1, 2})
	cases := map[string][]Tensor{
		"given twice":   {a, a},
		"empty":         {F32("", []int{1}, []float32{1})},
		"reserved":      {F32("__metadata__", []int{1}, []float32{1})},
		"holds 8 bytes": {F32("a", []int{3}, []float32{1, 2})},
		`dtype "I8"`:    {{Name: "a", Dtype: "I8", Shape: []int{1}, Data: []byte{1}}},
		"shape [-1]":    {{Name: "a", Dtype: "F32", Shape: []int{-1}}},
	}
	for want, ts := range cases {
		if _, err := Encode(ts, nil); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want one saying %q", want, err, want)
		}
	}
}

// TestDecodeRefuses breaks each rule of the format in turn.
func TestDecodeRefuses(t *testing.T) {
	withHeader := func(h string, buffer int) []byte {
		b := make([]byte, 8, 8+len(h)+buffer)
		binary.LittleEndian.PutUint64(b, uint64(len(h)))
		return append(append(b, h...), make([]byte, buffer)...)
	}
	huge := make([]byte, 16)
	binary.LittleEndian.PutUint64(huge, MaxHeader+1)
	cases := map[string][]byte{
		"short":             golden[:7],
		"header too large":  huge,
		"header past end":   golden[:100],
		"not an object":     withHeader(`["a"]`, 0),
		"given twice":       withHeader(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}`, 8),
		"hole":              withHeader(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}`, 8),
		"overlap":           withHeader(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}`, 8),
		"bytes after":       withHeader(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}`, 8),
		"size mismatch":     withHeader(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}}`, 4),
		"past the buffer":   withHeader(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}`, 4),
		"unknown dtype":     withHeader(`{"a":{"dtype":"BF16","shape":[2],"data_offsets":[0,4]}}`, 4),
		"negative shape":    withHeader(`{"a":{"dtype":"F32","shape":[-1],"data_offsets":[0,0]}}`, 0),
		"overflowing shape": withHeader(`{"a":{"dtype":"F64","shape":[4294967296,4294967296],"data_offsets":[0,0]}}`, 0),
		"unknown field":     withHeader(`{"a":{"dtype":"F32","shape":[],"data_offsets":[0,4],"x":1}}`, 4),
		"trailing junk":     withHeader(`{}x`, 0),
		"bad metadata":      withHeader(`{"__metadata__":{"k":1}}`, 0),
	}
	for name, b := range cases {
		if _, _, err := Decode(b); !errors.Is(err, ErrFormat) {
			t.Errorf("%s: error %v, want ErrFormat", name, err)
		}
	}
}

// FuzzDecode checks that no input makes Decode panic or return tensors that do not fit the
// input, and that what it accepts encodes to a file it reads back the same.
func FuzzDecode(f *testing.F) {
	f.Add(golden)
	b, _ := Encode([]Tensor{F32("x", []int{2, 2}, []float32{1, 2, 3, 4})}, nil)
	f.Add(b)
	f.Add([]byte("\x02\x00\x00\x00\x00\x00\x00\x00{}"))
	f.Fuzz(func(t *testing.T, b []byte) {
		ts, meta, err := Decode(b)
		if err != nil {
			return
		}
		total := 0
		for _, x := range ts {
			total += len(x.Data)
		}
		if total > len(b) {
			t.Fatalf("%d bytes of tensors from %d bytes of input", total, len(b))
		}
		again, err := Encode(ts, meta)
		if err != nil {
			return // a name Decode takes and Encode refuses, such as "" for an empty key
		}
		back, meta2, err := Decode(again)
		if err != nil || len(back) != len(ts) || len(meta2) != len(meta) {
			t.Fatalf("re-encoded file read back as %d tensors, %v: %v", len(back), meta2, err)
		}
	})
}
