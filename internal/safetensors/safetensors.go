// Package safetensors writes and reads the safetensors format (huggingface/safetensors), so that
// a trained model leaves this program in a file PyTorch, JAX and the Hugging Face tools read:
//
//	size    8 bytes, little-endian uint64: N, the length of the header
//	header  N bytes of UTF-8 JSON: {"NAME": {"dtype": "F32", "shape": [2, 3],
//	        "data_offsets": [BEGIN, END]}, ..., "__metadata__": {"key": "value"}}
//	buffer  the tensors' bytes, row-major and little-endian, BEGIN and END counted from the
//	        start of the buffer
//
// The format's rules, which Decode checks: the header is at most 100 MB (a bound against
// crafted files), starts with '{', names no tensor twice, and the tensors fill the buffer
// exactly, without holes or overlaps, each exactly the bytes its dtype and shape make. The
// writer pads the header with spaces to a multiple of 8 bytes, as the reference
// implementation does, so that the buffer is aligned. Only F32 and F64 are supported: the
// dtypes of this program's models.
package safetensors

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
)

// MaxHeader is the largest header the format allows, and Decode reads: 100 MB.
const MaxHeader = 100_000_000

// metadataKey is the header's entry for free-form string metadata.
const metadataKey = "__metadata__"

// ErrFormat says that bytes are not a valid safetensors file.
var ErrFormat = errors.New("not a valid safetensors file")

// Tensor is one named tensor: its dtype ("F32" or "F64"), its shape and its elements as the
// format stores them, row-major and little-endian.
type Tensor struct {
	Name  string
	Dtype string
	Shape []int
	Data  []byte
}

// F32 is a float32 tensor of the given shape holding v, row-major.
func F32(name string, shape []int, v []float32) Tensor {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return Tensor{Name: name, Dtype: "F32", Shape: append([]int(nil), shape...), Data: b}
}

// F64 is a float64 tensor of the given shape holding v, row-major.
func F64(name string, shape []int, v []float64) Tensor {
	b := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(x))
	}
	return Tensor{Name: name, Dtype: "F64", Shape: append([]int(nil), shape...), Data: b}
}

// Float64s returns the tensor's elements as float64.
func (t Tensor) Float64s() []float64 {
	size := dtypeSize[t.Dtype]
	if size == 0 {
		return nil
	}
	out := make([]float64, len(t.Data)/size)
	for i := range out {
		if size == 4 {
			out[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(t.Data[4*i:])))
		} else {
			out[i] = math.Float64frombits(binary.LittleEndian.Uint64(t.Data[8*i:]))
		}
	}
	return out
}

// dtypeSize is the bytes of one element of each dtype this package handles.
var dtypeSize = map[string]int{"F32": 4, "F64": 8}

// info is one tensor's entry in the header.
type info struct {
	Dtype       string   `json:"dtype"`
	Shape       []int    `json:"shape"`
	DataOffsets [2]int64 `json:"data_offsets"`
}

// bytesOf is the number of bytes a tensor of the dtype and shape holds, or an error for an
// unknown dtype, a negative dimension or a size past what an int64 holds.
func bytesOf(dtype string, shape []int) (int64, error) {
	size, ok := dtypeSize[dtype]
	if !ok {
		return 0, fmt.Errorf("dtype %q (this reader takes F32 and F64)", dtype)
	}
	n := int64(size)
	for _, d := range shape {
		if d < 0 || d > 0 && n > math.MaxInt64/int64(d) {
			return 0, fmt.Errorf("shape %v", shape)
		}
		n *= int64(d)
	}
	return n, nil
}

// Encode returns the safetensors bytes of the tensors, laid out in the order given, and of
// the metadata (nil for none). It refuses a name given twice, an empty name or the metadata's
// key, a tensor whose bytes do not fit its dtype and shape, and a header past MaxHeader.
func Encode(tensors []Tensor, metadata map[string]string) ([]byte, error) {
	var h bytes.Buffer
	h.WriteByte('{')
	seen := map[string]bool{}
	var offset int64
	for i, t := range tensors {
		if t.Name == "" || t.Name == metadataKey || seen[t.Name] {
			return nil, fmt.Errorf("safetensors: tensor name %q is empty, reserved or given twice", t.Name)
		}
		seen[t.Name] = true
		n, err := bytesOf(t.Dtype, t.Shape)
		if err != nil {
			return nil, fmt.Errorf("safetensors: tensor %s: %v", t.Name, err)
		}
		if n != int64(len(t.Data)) {
			return nil, fmt.Errorf("safetensors: tensor %s of %s %v holds %d bytes, want %d", t.Name, t.Dtype, t.Shape, len(t.Data), n)
		}
		shape := t.Shape
		if shape == nil {
			shape = []int{} // a scalar: [] in the header, not null
		}
		if i > 0 {
			h.WriteByte(',')
		}
		writeEntry(&h, t.Name, info{Dtype: t.Dtype, Shape: shape, DataOffsets: [2]int64{offset, offset + n}})
		offset += n
	}
	if len(metadata) > 0 {
		if len(tensors) > 0 {
			h.WriteByte(',')
		}
		writeEntry(&h, metadataKey, metadata)
	}
	h.WriteByte('}')
	// Spaces to a multiple of 8, so that the buffer, 8 bytes of size after the start, is
	// aligned for any dtype; JSON allows them after the closing brace.
	for h.Len()%8 != 0 {
		h.WriteByte(' ')
	}
	if h.Len() > MaxHeader {
		return nil, fmt.Errorf("safetensors: header of %d bytes, above the format's %d", h.Len(), MaxHeader)
	}
	out := make([]byte, 8, 8+int64(h.Len())+offset)
	binary.LittleEndian.PutUint64(out, uint64(h.Len()))
	out = append(out, h.Bytes()...)
	for _, t := range tensors {
		out = append(out, t.Data...)
	}
	return out, nil
}

// writeEntry writes "key": value into the header. Neither can fail to encode: the key is a
// string and the value an info or a map of strings.
func writeEntry(h *bytes.Buffer, key string, value any) {
	k, _ := json.Marshal(key)
	v, _ := json.Marshal(value)
	h.Write(k)
	h.WriteByte(':')
	h.Write(v)
}

// Decode reads safetensors bytes: the tensors in the order of their offsets, and the
// metadata. Every bound is checked before anything is allocated beyond the input itself, so a
// crafted header cannot make it allocate more than b holds.
func Decode(b []byte) ([]Tensor, map[string]string, error) {
	if len(b) < 8 {
		return nil, nil, formatErr("%d bytes, shorter than the 8-byte header size", len(b))
	}
	n := binary.LittleEndian.Uint64(b)
	if n > MaxHeader || n > uint64(len(b)-8) {
		return nil, nil, formatErr("header of %d bytes in a file of %d (at most %d)", n, len(b), MaxHeader)
	}
	header, buffer := b[8:8+n], b[8+n:]
	if len(header) == 0 || header[0] != '{' {
		return nil, nil, formatErr("the header does not start with '{'")
	}
	entries, err := entries(header)
	if err != nil {
		return nil, nil, err
	}
	var meta map[string]string
	var tensors []Tensor
	var offsets [][2]int64
	for _, e := range entries {
		if e.name == metadataKey {
			if err := json.Unmarshal(e.value, &meta); err != nil {
				return nil, nil, formatErr("__metadata__: %v", err)
			}
			continue
		}
		t, off, err := tensorAt(e.name, e.value, buffer)
		if err != nil {
			return nil, nil, err
		}
		tensors, offsets = append(tensors, t), append(offsets, off)
	}
	if err := checkCover(tensors, offsets, int64(len(buffer))); err != nil {
		return nil, nil, err
	}
	return tensors, meta, nil
}

func formatErr(format string, args ...any) error {
	return fmt.Errorf("safetensors: %w: %s", ErrFormat, fmt.Sprintf(format, args...))
}

// entry is one key of the header and its value, undecoded.
type entry struct {
	name  string
	value json.RawMessage
}

// entries reads the header's object key by key, in order, refusing a key given twice, which
// a decoder into a map would silently let the last one win.
func entries(header []byte) ([]entry, error) {
	d := json.NewDecoder(bytes.NewReader(header))
	if _, err := d.Token(); err != nil { // the '{' checked above
		return nil, formatErr("header: %v", err)
	}
	var out []entry
	seen := map[string]bool{}
	for d.More() {
		tok, err := d.Token()
		if err != nil {
			return nil, formatErr("header: %v", err)
		}
		name, _ := tok.(string) // an object's keys are strings, or Token fails
		if seen[name] {
			return nil, formatErr("%q given twice in the header", name)
		}
		seen[name] = true
		var v json.RawMessage
		if err := d.Decode(&v); err != nil {
			return nil, formatErr("header, %q: %v", name, err)
		}
		out = append(out, entry{name, v})
	}
	if _, err := d.Token(); err != nil { // the closing '}'
		return nil, formatErr("header: %v", err)
	}
	rest := header[d.InputOffset():]
	if len(strings.TrimRight(string(rest), " ")) != 0 {
		return nil, formatErr("%d bytes after the header's object that are not spaces", len(rest))
	}
	return out, nil
}

// tensorAt decodes a tensor's entry and checks its offsets against the buffer and its bytes
// against its dtype and shape.
func tensorAt(name string, value json.RawMessage, buffer []byte) (Tensor, [2]int64, error) {
	var in info
	d := json.NewDecoder(bytes.NewReader(value))
	d.DisallowUnknownFields()
	if err := d.Decode(&in); err != nil {
		return Tensor{}, [2]int64{}, formatErr("tensor %q: %v", name, err)
	}
	size, err := bytesOf(in.Dtype, in.Shape)
	if err != nil {
		return Tensor{}, [2]int64{}, formatErr("tensor %q: %v", name, err)
	}
	begin, end := in.DataOffsets[0], in.DataOffsets[1]
	if begin < 0 || begin > end || end > int64(len(buffer)) || end-begin != size {
		return Tensor{}, [2]int64{}, formatErr("tensor %q of %s %v has offsets [%d, %d] in a buffer of %d bytes", name, in.Dtype, in.Shape, begin, end, len(buffer))
	}
	t := Tensor{Name: name, Dtype: in.Dtype, Shape: in.Shape, Data: buffer[begin:end:end]}
	return t, in.DataOffsets, nil
}

// checkCover sorts the tensors by offset and checks that they fill the buffer exactly: no
// hole, no overlap, nothing after the last.
func checkCover(tensors []Tensor, offsets [][2]int64, size int64) error {
	idx := make([]int, len(tensors))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return offsets[idx[a]][0] < offsets[idx[b]][0] })
	var at int64
	sorted := make([]Tensor, len(tensors))
	for k, i := range idx {
		if offsets[i][0] != at {
			return formatErr("tensor %q starts at %d, want %d: the tensors must fill the buffer without holes or overlaps", tensors[i].Name, offsets[i][0], at)
		}
		at = offsets[i][1]
		sorted[k] = tensors[i]
	}
	if at != size {
		return formatErr("the tensors end at %d in a buffer of %d bytes", at, size)
	}
	copy(tensors, sorted)
	return nil
}
