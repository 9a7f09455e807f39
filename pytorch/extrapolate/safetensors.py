"""The safetensors format (huggingface/safetensors), read and written with the standard library
and torch alone: an 8-byte little-endian header size N, N bytes of JSON {name: {dtype, shape,
data_offsets}, "__metadata__": {...}}, then the tensors' bytes, offsets counted from the
buffer's start. internal/safetensors is the Go side; both take F32 and F64 only."""
import ctypes
import json
import math
import struct
import sys

import torch

DTYPES = {"F32": torch.float32, "F64": torch.float64}
NAMES = {v: k for k, v in DTYPES.items()}
MAX_HEADER = 100_000_000


def _no_duplicates(pairs):
    keys = [k for k, _ in pairs]
    if len(keys) != len(set(keys)):
        raise ValueError("safetensors: a name given twice in the header")
    return dict(pairs)


def check_entry(path, name, e):
    """Refuses a header entry whose fields are not of safetensors' types: dtype a string, shape a
    list of whole numbers at least 0, data_offsets two whole numbers at least 0."""
    def counts(x, n=None):
        return isinstance(x, list) and (n is None or len(x) == n) and all(
            isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in x)
    if not isinstance(e, dict) or set(e) != {"dtype", "shape", "data_offsets"}:
        raise ValueError(f"{path}: tensor {name}: want dtype, shape and data_offsets, got {e!r:.80}")
    if not isinstance(e["dtype"], str):
        raise ValueError(f"{path}: tensor {name}: dtype {e['dtype']!r:.40}, want a string such as F32")
    if not counts(e["shape"]):
        raise ValueError(f"{path}: tensor {name}: shape {e['shape']!r:.40}, want a list of whole numbers at least 0")
    if not counts(e["data_offsets"], 2):
        raise ValueError(f"{path}: tensor {name}: data_offsets {e['data_offsets']!r:.40}, want two whole numbers at least 0")


def _little_endian():
    if sys.byteorder != "little":
        raise ValueError("safetensors: this code maps the little-endian bytes directly")


def decode(path, data):
    """The tensors of safetensors bytes, as ({name: tensor} in file order, metadata); path names
    the file in errors. Every entry is checked against the format before a tensor is made, and
    the tensors must fill the buffer without holes or overlaps."""
    _little_endian()
    if len(data) < 8:
        raise ValueError(f"{path}: too short for a safetensors file")
    (n,) = struct.unpack("<Q", data[:8])
    if n > MAX_HEADER or n > len(data) - 8:
        raise ValueError(f"{path}: header of {n} bytes in a file of {len(data)}")
    try:
        header = json.loads(data[8:8 + n].decode("utf-8"), object_pairs_hook=_no_duplicates)
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ValueError(f"{path}: the header is not JSON: {e}") from e
    if not isinstance(header, dict):
        raise ValueError(f"{path}: the header is a JSON {type(header).__name__}, want an object of tensors")
    meta = header.pop("__metadata__", {})
    buffer = data[8 + n:]
    tensors, spans = {}, []
    for name, e in header.items():
        check_entry(path, name, e)
        dtype = DTYPES.get(e["dtype"])
        if dtype is None:
            raise ValueError(f"{path}: tensor {name} has dtype {e['dtype']}, this code reads F32 and F64")
        begin, end = e["data_offsets"]
        count = math.prod(e["shape"])
        if not 0 <= begin <= end <= len(buffer) or end - begin != count * (4 if dtype == torch.float32 else 8):
            raise ValueError(f"{path}: tensor {name} has offsets {e['data_offsets']} for shape {e['shape']}")
        spans.append((begin, end))
        raw = bytearray(buffer[begin:end])  # a copy: frombuffer shares memory, and wants it writable
        tensors[name] = torch.frombuffer(raw, dtype=dtype).reshape(e["shape"]) if count else torch.zeros(e["shape"], dtype=dtype)
    at = 0
    for begin, end in sorted(spans):
        if begin != at:
            raise ValueError(f"{path}: the tensors leave a hole or overlap at byte {at}")
        at = end
    if at != len(buffer):
        raise ValueError(f"{path}: {len(buffer) - at} bytes after the last tensor")
    return tensors, meta


def read(path):
    """The tensors and metadata of the safetensors file at path (decode)."""
    with open(path, "rb") as f:
        return decode(path, f.read())


def encode(tensors, metadata=None):
    """The safetensors bytes of tensors, a list of (name, tensor) laid out in that order, and of
    metadata (strings). The header is padded with spaces to a multiple of 8 bytes, as the
    reference writer and cmd/export pad it, so that the buffer is aligned."""
    _little_endian()
    header, chunks, at = {}, [], 0
    for name, t in tensors:
        if t.dtype not in NAMES:
            raise ValueError(f"safetensors: tensor {name} is {t.dtype}, this code writes float32 and float64")
        t = t.detach().to("cpu").contiguous()
        size = t.numel() * t.element_size()
        # The bytes straight from the tensor's memory: no NumPy needed.
        chunks.append(ctypes.string_at(t.data_ptr(), size) if size else b"")
        header[name] = {"dtype": NAMES[t.dtype], "shape": list(t.shape), "data_offsets": [at, at + size]}
        at += size
    if metadata:
        header["__metadata__"] = metadata
    h = json.dumps(header, separators=(",", ":")).encode("utf-8")
    h += b" " * (-len(h) % 8)
    return struct.pack("<Q", len(h)) + h + b"".join(chunks)
