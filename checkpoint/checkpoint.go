// Package checkpoint reads and writes checkpoint files: a versioned container of named float
// tensors and a JSON header, closed by a SHA-256 checksum so that a truncated or altered file is
// detected, and written atomically so that a crash never leaves half a file.
//
// Layout, little-endian:
//
//	magic    8 bytes  "XTRPCKPT"
//	version  uint32   Version
//	hdrlen   uint32   length of the header
//	header   hdrlen bytes of JSON: {"meta": ..., "tensors": [{"name", "dtype", "shape"}, ...]}
//	tensors  each tensor's elements in order, float32 or float64
//	sum      32 bytes, SHA-256 of everything before it
package checkpoint

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"

	"gorgonia.org/tensor"

	"extrapolate/internal/atomicfile"
	"extrapolate/internal/inputfile"
)

// Version is the format version this package writes and reads.
const Version = 1

const (
	magic = "XTRPCKPT"
	// maxHeader bounds the JSON header; real headers are a few kilobytes.
	maxHeader = 16 << 20
	// maxDims bounds a tensor's rank and maxDim each dimension, maxTensors their number and
	// maxName their names' length, against crafted headers.
	maxDims    = 8
	maxDim     = 1 << 31
	maxTensors = 1 << 14
	maxName    = 256
)

// ErrCorrupt says the file is not a whole, unaltered checkpoint.
var ErrCorrupt = errors.New("corrupt checkpoint")

// Tensor is one named tensor of a checkpoint.
type Tensor struct {
	Name  string
	Value *tensor.Dense
}

type header struct {
	Meta    json.RawMessage `json:"meta"`
	Tensors []tensorInfo    `json:"tensors"`
}

type tensorInfo struct {
	Name  string `json:"name"`
	Dtype string `json:"dtype"`
	Shape []int  `json:"shape"`
}

// encode returns the checkpoint bytes of meta (any JSON-encodable value) and the tensors.
func encode(meta any, tensors []Tensor) ([]byte, error) {
	m, err := json.Marshal(meta)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	h := header{Meta: m}
	size := 0
	for _, t := range tensors {
		dt := t.Value.Dtype()
		if dt != tensor.Float32 && dt != tensor.Float64 {
			return nil, fmt.Errorf("checkpoint: tensor %s has dtype %v", t.Name, dt)
		}
		h.Tensors = append(h.Tensors, tensorInfo{Name: t.Name, Dtype: dt.String(), Shape: append([]int(nil), t.Value.Shape()...)})
		size += len(t.Value.Raw)
	}
	hb, err := json.Marshal(h)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	var buf bytes.Buffer
	buf.Grow(len(magic) + 8 + len(hb) + size + sha256.Size)
	buf.WriteString(magic)
	binary.Write(&buf, binary.LittleEndian, uint32(Version))
	binary.Write(&buf, binary.LittleEndian, uint32(len(hb)))
	buf.Write(hb)
	for _, t := range tensors {
		buf.Write(t.Value.Raw) // the machines we run on are little-endian, as the format is
	}
	sum := sha256.Sum256(buf.Bytes())
	buf.Write(sum[:])
	return buf.Bytes(), nil
}

// Write saves a checkpoint to path atomically.
func Write(path string, meta any, tensors []Tensor) error {
	b, err := encode(meta, tensors)
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(path, b)
}

// Read loads the checkpoint at path, decoding its meta into meta. It checks the format version,
// the checksum and that the declared tensors fill the file exactly before allocating them, so a
// crafted file cannot make it allocate more than the file's own size.
func Read(path string, meta any) ([]Tensor, error) {
	ts, _, err := ReadSum(path, meta)
	return ts, err
}

// ReadSum is Read that also returns the SHA-256 checksum closing the file, checked against its
// content: it names that content, so that a file replaced at the same path is told apart.
func ReadSum(path string, meta any) ([]Tensor, [sha256.Size]byte, error) {
	f, size, err := inputfile.Open(path)
	if err != nil {
		return nil, [sha256.Size]byte{}, err
	}
	defer f.Close()
	ts, sum, err := decodeSum(f, size, meta)
	if err != nil {
		return nil, sum, fmt.Errorf("%s: %w", path, err)
	}
	return ts, sum, nil
}

// corrupt is ErrCorrupt with what is wrong.
func corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrCorrupt, fmt.Sprintf(format, args...))
}

// fixed is the size of a checkpoint's parts other than its header and tensors: the magic, the
// version, the header's length and the checksum.
const fixed = int64(len(magic) + 8 + sha256.Size)

// decode reads a checkpoint of the given size from r.
func decode(r io.Reader, size int64, meta any) ([]Tensor, error) {
	ts, _, err := decodeSum(r, size, meta)
	return ts, err
}

// decodeSum is decode that also returns the checksum closing the checkpoint, once checked.
func decodeSum(r io.Reader, size int64, meta any) ([]Tensor, [sha256.Size]byte, error) {
	var sum, none [sha256.Size]byte
	if size < fixed {
		return nil, none, corrupt("%d bytes is too short to be a checkpoint", size)
	}
	h := sha256.New()
	br := bufio.NewReaderSize(io.TeeReader(io.LimitReader(r, size-sha256.Size), h), 1<<16)
	hd, hlen, err := readHeader(br, size)
	if err != nil {
		return nil, none, err
	}
	sizes, err := tensorSizes(hd.Tensors, size-fixed-hlen)
	if err != nil {
		return nil, none, err
	}
	out, err := readTensors(br, hd.Tensors, sizes)
	if err != nil {
		return nil, none, err
	}
	if n, _ := br.Read(make([]byte, 1)); n != 0 {
		return nil, none, corrupt("data past the tensors")
	}
	if _, err := io.ReadFull(r, sum[:]); err != nil {
		return nil, none, corrupt("reading the checksum: %v", err)
	}
	if !bytes.Equal(sum[:], h.Sum(nil)) {
		return nil, none, corrupt("checksum mismatch: the file was truncated or altered")
	}
	if meta != nil {
		if err := json.Unmarshal(hd.Meta, meta); err != nil {
			return nil, none, corrupt("meta: %v", err)
		}
	}
	return out, sum, nil
}

// readHeader reads the preamble and the JSON header of a checkpoint of the given size, and
// returns the header and its length. A file of another version is reported as that, not as
// corrupt: it may be whole, and only this program too old or too new for it.
func readHeader(r io.Reader, size int64) (header, int64, error) {
	var pre [len(magic) + 8]byte
	if _, err := io.ReadFull(r, pre[:]); err != nil {
		return header{}, 0, corrupt("reading the preamble: %v", err)
	}
	if string(pre[:len(magic)]) != magic {
		return header{}, 0, corrupt("not a checkpoint file (bad magic)")
	}
	version := binary.LittleEndian.Uint32(pre[len(magic):])
	if version != Version {
		return header{}, 0, fmt.Errorf("checkpoint format version %d, this program reads version %d", version, Version)
	}
	hlen := int64(binary.LittleEndian.Uint32(pre[len(magic)+4:]))
	if hlen > maxHeader || hlen > size-fixed {
		return header{}, 0, corrupt("header of %d bytes in a file of %d", hlen, size)
	}
	hb := make([]byte, hlen)
	if _, err := io.ReadFull(r, hb); err != nil {
		return header{}, 0, corrupt("reading the header: %v", err)
	}
	var hd header
	if err := json.Unmarshal(hb, &hd); err != nil {
		return header{}, 0, corrupt("header: %v", err)
	}
	if len(hd.Tensors) > maxTensors {
		return header{}, 0, corrupt("%d tensors", len(hd.Tensors))
	}
	return hd, hlen, nil
}

// tensorSizes returns the bytes of each tensor the header declares, checked against the left
// bytes of the file before anything is allocated, so that a crafted header cannot make the
// reader allocate more than the file holds. The tensors must fill the file exactly.
func tensorSizes(infos []tensorInfo, left int64) ([]int64, error) {
	sizes := make([]int64, len(infos))
	for i, t := range infos {
		if t.Name == "" || len(t.Name) > maxName {
			return nil, corrupt("tensor name of %d bytes", len(t.Name))
		}
		var elem int64
		switch t.Dtype {
		case "float32":
			elem = 4
		case "float64":
			elem = 8
		default:
			return nil, corrupt("tensor %q has dtype %q", t.Name, t.Dtype)
		}
		if len(t.Shape) > maxDims {
			return nil, corrupt("tensor %q has %d dimensions", t.Name, len(t.Shape))
		}
		n := elem
		for _, d := range t.Shape {
			if d <= 0 || d > maxDim || n > math.MaxInt64/int64(d) {
				return nil, corrupt("tensor %q has shape %v", t.Name, t.Shape)
			}
			n *= int64(d)
		}
		if n > left {
			return nil, corrupt("tensor %q of shape %v needs %d bytes, %d are left", t.Name, t.Shape, n, left)
		}
		left -= n
		sizes[i] = n
	}
	if left != 0 {
		return nil, corrupt("%d bytes after the last tensor", left)
	}
	return sizes, nil
}

// readTensors reads the tensors the header declares, of the sizes tensorSizes checked.
func readTensors(r io.Reader, infos []tensorInfo, sizes []int64) ([]Tensor, error) {
	out := make([]Tensor, len(infos))
	for i, t := range infos {
		dt := tensor.Float32
		if t.Dtype == "float64" {
			dt = tensor.Float64
		}
		v := tensor.New(tensor.WithShape(t.Shape...), tensor.Of(dt))
		if int64(len(v.Raw)) != sizes[i] {
			return nil, corrupt("tensor %q: size mismatch", t.Name)
		}
		if _, err := io.ReadFull(r, v.Raw); err != nil {
			return nil, corrupt("reading tensor %q: %v", t.Name, err)
		}
		out[i] = Tensor{Name: t.Name, Value: v}
	}
	return out, nil
}
