#!/usr/bin/python3
"""Rebuild a model exported by cmd/export in PyTorch, and score it as cmd/eval does.

    go run ./cmd/export -checkpoint results/rope/model.ckpt -out results/rope/export
    python3 pytorch/load.py results/rope/export                      # perplexity by length
    python3 pytorch/load.py results/rope/export --scaling none,yarn --lengths 64,256
    python3 pytorch/load.py results/rope/export --json               # the numbers as JSON
    python3 pytorch/load.py results/rope/export results/alibi/export # several, torch loaded once

As a module: `model = load("results/rope/export")` gives a `Model` whose `logits(ids)` takes a
(batch, n) LongTensor of bytes; `model.losses(ids, targets)` the loss of every token.

The model is rebuilt from config.json and model.safetensors alone, from the formulas of the papers
each scheme follows (docs/schemes.md; each function below names its source): a byte-level decoder
with pre-LayerNorm blocks of causal multi-head attention and a 4x tanh-GELU MLP, a final LayerNorm
and an untied head; linear layers are x @ W + b with W stored (in, out). Perplexity is scored on
the validation text cmd/eval scores, in the same windows: the first `tokens` bytes of validation
cut into windows of each length (non-overlapping, or sliding with the config's stride), each byte
predicted from the earlier bytes of its window only.

It computes in float64 by default (--dtype float32 for the model's own precision): the Go model
computes in float32, so the two agree to float32 rounding, about 1e-6 relative on the loss.

Standard library and torch only (Debian: apt-get install python3-torch; run with /usr/bin/python3).
"""
import argparse
import hashlib
import importlib.util
import json
import math
import os
import struct
import subprocess
import sys

import torch
import torch.nn.functional as F

FORMAT, VERSION = "extrapolate-export", 1


class NotApplicable(Exception):
    """A length the scheme cannot handle by design (learned positions past their table)."""


# ---------------------------------------------------------------- safetensors

SAFETENSORS_DTYPES = {"F32": torch.float32, "F64": torch.float64}
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


def read_safetensors(path):
    """Read a safetensors file (huggingface/safetensors' format): an 8-byte little-endian header
    size N, N bytes of JSON {name: {dtype, shape, data_offsets}, "__metadata__": {...}}, then the
    tensors' bytes, offsets counted from the buffer's start. Returns ({name: tensor}, metadata)."""
    if sys.byteorder != "little":
        raise ValueError("safetensors: this reader maps the little-endian bytes directly")
    with open(path, "rb") as f:
        data = f.read()
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
        dtype = SAFETENSORS_DTYPES.get(e["dtype"])
        if dtype is None:
            raise ValueError(f"{path}: tensor {name} has dtype {e['dtype']}, this loader reads F32 and F64")
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


# ---------------------------------------------------------------- the schemes' registry

SCHEMES = {}      # a scheme's name in config.json → the function that rebuilds it
ROTATING = set()  # the schemes that rotate q and k, so take a RoPE scaling


def scheme(name, rotating=False):
    """Registers the decorated function as the rebuild of the scheme cmd/export names `name`,
    as position.Register does in Go. The function takes (settings, weights, layer, n, scaling):
    config.json's position settings, the export's weights by name, the layer, the length, and
    the scaling for a rotating scheme (else None); it returns what the scheme adds at n
    positions, any of: "table" (n, d_model), "rotation" (a Rotation), "bias" (heads, n, n),
    "forget" ((W, b) of FoX's gates), "stick" (stick-breaking's attend_current), "cope" (the
    position embeddings). A scheme of your own goes in a file of your own given with --plugin
    (docs/export.md#a-scheme-of-your-own)."""
    def add(f):
        if name in SCHEMES:
            raise ValueError(f"position scheme {name!r} registered twice")
        SCHEMES[name] = f
        if rotating:
            ROTATING.add(name)
        return f
    return add


# ---------------------------------------------------------------- RoPE and its scalings

def rope_inv_freq(dim, base):
    """RoPE's frequency ladder (Su et al. 2021): pair i of the dim rotated dimensions turns by
    base^(-2i/dim) radians per position."""
    return base ** (-torch.arange(0, dim, 2, dtype=torch.float64) / dim)


def scale_linear(inv, dim, base, train_len, n, s, params):
    """Position interpolation (Chen et al. 2023): every frequency divided by s."""
    return inv / s, 1.0


def scale_ntk(inv, dim, base, train_len, n, s, params):
    """NTK-aware scaling (bloc97, 2023): the base raised to base·s^(dim/(dim−2))."""
    return rope_inv_freq(dim, base * s ** (dim / (dim - 2))), 1.0


def scale_dynamic_ntk(inv, dim, base, train_len, n, s, params):
    """Dynamic NTK (HF's _compute_dynamic_ntk_parameters): for n > L,
    base·(s·n/L − (s−1))^(dim/(dim−2)); the plain ladder at or below the training length."""
    if n <= train_len:
        return inv, 1.0
    return rope_inv_freq(dim, base * (s * n / train_len - (s - 1)) ** (dim / (dim - 2))), 1.0


def scale_yarn(inv, dim, base, train_len, n, s, params):
    """YaRN (Peng et al. 2023; HF's _compute_yarn_parameters): NTK-by-parts. The dimensions whose
    frequency turns more than beta_fast times over L keep it, those turning fewer than beta_slow
    times are interpolated (divided by s), a linear ramp between; the attention factor
    0.1·ln(s)+1 multiplies cos and sin."""
    def correction_dim(rotations):
        return dim * math.log(train_len / (rotations * 2 * math.pi)) / (2 * math.log(base))
    low, high = correction_dim(params["beta_fast"]), correction_dim(params["beta_slow"])
    if params.get("truncate", True):
        low, high = math.floor(low), math.ceil(high)
    low, high = max(low, 0), min(high, dim - 1)
    if low == high:
        high += 0.001
    ramp = ((torch.arange(dim // 2, dtype=torch.float64) - low) / (high - low)).clamp(0, 1)
    extrapolation = 1 - ramp
    freq = inv / s * (1 - extrapolation) + inv * extrapolation
    return freq, (0.1 * math.log(s) + 1) if s > 1 else 1.0


def scale_llama3(inv, dim, base, train_len, n, s, params):
    """Llama 3's scaling (HF's _compute_llama3_parameters): wavelengths above
    L/low_freq_factor are divided by s, those below L/high_freq_factor kept, and those between
    blended with weight (L/wavelength − low)/(high − low) on the kept frequency."""
    old = params.get("original_max_position_embeddings") or train_len
    low, high = params["low_freq_factor"], params["high_freq_factor"]
    wave = 2 * math.pi / inv
    out = torch.where(wave > old / low, inv / s, inv)
    smooth = (old / wave - low) / (high - low)
    blended = (1 - smooth) * out / s + smooth * out
    medium = (wave >= old / high) & (wave <= old / low)
    return torch.where(medium, blended, out), 1.0


SCALINGS = {
    "linear": (scale_linear, {}),
    "ntk": (scale_ntk, {}),
    "dynamic_ntk": (scale_dynamic_ntk, {}),
    "yarn": (scale_yarn, {"beta_fast": 32.0, "beta_slow": 1.0, "truncate": True}),
    "llama3": (scale_llama3, {"low_freq_factor": 1.0, "high_freq_factor": 4.0, "original_max_position_embeddings": 0}),
}


def factor_at(factor, n, train_len):
    """A scaling's factor at n positions: a number, or auto, max(1, n/L)."""
    return max(1.0, n / train_len) if factor == "auto" else float(factor)


def scaling_name(scaling):
    if scaling is None:
        return "none"
    f = scaling["factor"]
    return f"{scaling['type']}(factor={f if f == 'auto' else format(float(f), 'g')})"


class Rotation:
    """cos and sin (n, pairs) for the queries, and for the keys (different for xPos); pairs
    (j, j+pairs) of the head's first 2·pairs dimensions (rotate_half), or (2j, 2j+1)."""

    def __init__(self, cos, sin, interleaved, key_cos=None, key_sin=None):
        self.cos, self.sin, self.interleaved = cos, sin, interleaved
        self.key_cos = cos if key_cos is None else key_cos
        self.key_sin = sin if key_sin is None else key_sin

    @staticmethod
    def rotate(x, cos, sin, interleaved):
        """x (…, n, head_dim): each pair (a, b) turned to (a·cos − b·sin, b·cos + a·sin)."""
        p = cos.shape[-1]
        if interleaved:
            a, b = x[..., 0:2 * p:2], x[..., 1:2 * p:2]
        else:
            a, b = x[..., :p], x[..., p:2 * p]
        a2, b2 = a * cos - b * sin, b * cos + a * sin
        turned = torch.stack([a2, b2], -1).flatten(-2) if interleaved else torch.cat([a2, b2], -1)
        return torch.cat([turned, x[..., 2 * p:]], -1)

    def queries(self, q):
        return self.rotate(q, self.cos, self.sin, self.interleaved)

    def keys(self, k):
        return self.rotate(k, self.key_cos, self.key_sin, self.interleaved)


def rope_frequencies(st, scaling, n):
    """RoPE's frequencies at n positions over its rotated width st["dim"] (GPT-NeoX's
    rotary_pct when narrower than the head), scaled, and the attention factor. p-RoPE (Barbero
    et al. 2025, apply_p_rope) stops the st["stopped"] slowest pairs: frequency 0, after any
    scaling."""
    dim, base = st["dim"], st["base"]
    inv, factor = rope_inv_freq(dim, base), 1.0
    if scaling is not None:
        fn, defaults = SCALINGS[scaling["type"]]
        params = {**defaults, **scaling.get("params", {})}
        s = factor_at(scaling["factor"], n, st["train_len"])
        inv, factor = fn(inv, dim, base, st["train_len"], n, s, params)
    if st.get("stopped", 0):
        inv = inv.clone()
        inv[len(inv) - st["stopped"]:] = 0
    return inv, factor


@scheme("rope", rotating=True)
def rope(st, w, layer, n, scaling):
    """RoPE (Su et al. 2021): q and k of position t turned by t·inv_freq."""
    inv, factor = rope_frequencies(st, scaling, n)
    angle = torch.arange(n, dtype=torch.float64)[:, None] * inv[None, :]
    return {"rotation": Rotation(factor * angle.cos(), factor * angle.sin(), st["interleaved"])}


@scheme("xpos", rotating=True)
def xpos(st, w, layer, n, scaling):
    """xPos (Sun et al. 2022, torchscale's XPOS): RoPE, with pair i of the query at t scaled by
    ζ_i^(t/B) and of the key by ζ_i^(−t/B), ζ_i = (2i/d + γ)/(1 + γ), so that scores carry
    ζ_i^((t−s)/B) and fade with distance. Positions are centred on the window as torchscale
    centres them; the shift cancels in every score."""
    inv, factor = rope_frequencies(st, scaling, n)
    t = torch.arange(n, dtype=torch.float64)
    angle = t[:, None] * inv[None, :]
    dim, gamma = st["dim"], st["gamma"]
    zeta = (torch.arange(0, dim, 2, dtype=torch.float64) / dim + gamma) / (1 + gamma)
    up = zeta[None, :] ** ((t - n // 2)[:, None] / st["scale_base"])
    cos, sin = factor * angle.cos(), factor * angle.sin()
    return {"rotation": Rotation(cos * up, sin * up, st["interleaved"], cos / up, sin / up)}


# ---------------------------------------------------------------- biases and tables

def distances(n):
    """δ = i − j for query i and key j (negative above the diagonal, masked anyway)."""
    i = torch.arange(n)
    return i[:, None] - i[None, :]


def alibi_slopes(heads):
    """ALiBi's head slopes (Press et al. 2022, the reference get_slopes): for a power of two n,
    the geometric sequence from 2^(−8/n) with that ratio; otherwise the slopes of the power of
    two below, then every other slope of twice it."""
    def power_of_2(n):
        start = 2 ** (-(2 ** -(math.log2(n) - 3)))
        return [start * start ** i for i in range(n)]
    if math.log2(heads).is_integer():
        return power_of_2(heads)
    p = 2 ** math.floor(math.log2(heads))
    return power_of_2(p) + alibi_slopes(2 * p)[0::2][:heads - p]


@scheme("alibi")
def alibi(st, w, layer, n, scaling):
    """ALiBi: −m_h·(i − j) added to head h's scores."""
    m = torch.tensor(alibi_slopes(len(st["slopes"])), dtype=torch.float64)
    return {"bias": -m[:, None, None] * distances(n).clamp(min=0).double()}


@scheme("hard_alibi")
def hard_alibi(st, w, layer, n, scaling):
    """Hard-ALiBi (Jelassi et al. 2024; sjelassi/transformers_ssm_copy, hard_alibi_model.py): head
    h < masked_heads sees its h+1 latest keys, the rest masked by GPT-NeoX's masked_bias −1e9;
    the other heads see every key, with no position information."""
    delta = distances(n).clamp(min=0)
    bias = torch.zeros(st["heads"], n, n, dtype=torch.float64)
    for h in range(st["masked_heads"]):
        bias[h] = torch.where(delta > h, -1e9, 0.0)
    return {"bias": bias}


def t5_bucket(delta, buckets, max_distance):
    """T5's relative_position_bucket with bidirectional=False (Raffel et al. 2020): distances
    below buckets/2 exact, longer ones log-spaced up to max_distance, the rest in the last."""
    exact = buckets // 2
    if delta < exact:
        return delta
    large = exact + int(math.log(delta / exact) / math.log(max_distance / exact) * (buckets - exact))
    return min(large, buckets - 1)


@scheme("t5")
def t5(st, w, layer, n, scaling):
    """T5's learned bias: scale·table[bucket(i − j), h], one table for every layer (x-transformers'
    RelativePositionBias scales it by √head_dim)."""
    table = w["t5.bias"].double()
    idx = torch.tensor([t5_bucket(d, st["buckets"], st["max_distance"]) for d in range(n)])
    by_distance = st["scale"] * table[idx].T  # (heads, n)
    return {"bias": by_distance[:, distances(n).clamp(min=0)]}


@scheme("kerple")
def kerple(st, w, layer, n, scaling):
    """KERPLE, logarithmic (Chi et al. 2022, ParallelKerpleLog): −r1·log(1 + r2·(i − j)), r1 and
    r2 per head and layer, clamped at 0.01 as the reference does before use."""
    r1 = w["kerple.r1"][layer].double().clamp(min=0.01)
    r2 = w["kerple.r2"][layer].double().clamp(min=0.01)
    d = distances(n).clamp(min=0).double()
    return {"bias": -r1[:, None, None] * torch.log1p(r2[:, None, None] * d)}


@scheme("fire")
def fire(st, w, layer, n, scaling):
    """FIRE (Li et al. 2024, the paper's listing): f(ψ(i−j)/ψ(max(L, i))), ψ(x) = log(|c·x| + 1),
    f an MLP 1 → hidden (ReLU) → heads, the threshold L = |m·L0|, ε = 1e-6 on the denominator."""
    c, m = w["fire.c"][layer].double(), w["fire.m"][layer].double()
    w1, b1 = w["fire.w1"][layer].double(), w["fire.b1"][layer].double()
    w2, b2 = w["fire.w2"][layer].double(), w["fire.b2"][layer].double()
    pos = torch.arange(n, dtype=torch.float64)
    rel = torch.log(torch.abs(c * (pos[:, None] - pos[None, :]).clamp(min=0)) + 1)
    norm = torch.log(torch.abs(c * torch.maximum(pos, torch.abs(m * st["l0"]))) + 1) + 1e-6
    x = (rel / norm[:, None])[..., None]                    # (n, n, 1)
    out = torch.relu(x * w1 + b1) @ w2 + b2                 # (n, n, heads)
    return {"bias": out.permute(2, 0, 1)}


@scheme("fox")
def fox(st, w, layer, n, scaling):
    """FoX (Lin et al. 2025, the reference's base model): each head's forget gate f_t =
    σ(x_t·W + b) of the layer's normalised input x_t, and the score of query i for key j ≤ i
    gains Σ_{l=j+1..i} log f_l = c_i − c_j, c = cumsum(log f) (forgetting_attention's reference).
    The gates read the content: the piece is the layer's W (d_model, heads) and b (heads), which
    Model.attention applies."""
    return {"forget": (w["fox.wf"][layer].double(), w["fox.bf"][layer].double())}


@scheme("stickbreaking")
def stickbreaking(st, w, layer, n, scaling):
    """Stick-breaking attention (Tan et al. 2025): no positions; the softmax is replaced by
    A_ij = σ(z_ij)·Π_{j<k<i}(1−σ(z_ik)) (j < k ≤ i and j ≤ i with attend_current), which
    Model.attention computes as the reference's naive sb_ref.stickbreaking does. The piece is
    attend_current."""
    return {"stick": bool(st["attend_current"])}


def stick_breaking(s, attend_current, outside=None):
    """The stick-breaking weights of scores s (B, heads, n, n), as sb_ref.stickbreaking of
    shawntan/stickbreaking-attention computes them: log σ(z) where a query attends, log σ(−z)
    = log(1−σ(z)) summed over the keys between (an einsum with tril(−1)), then exp. The keys a
    window leaves out (outside) are unseen as the future is."""
    n = s.shape[-1]
    unseen = torch.ones(n, n, dtype=torch.bool).triu(1 if attend_current else 0)
    if outside is not None:
        unseen = unseen | outside
    log_z = F.logsigmoid(s).masked_fill(unseen, float("-inf"))
    log_beta = F.logsigmoid(-s).masked_fill(unseen, 0)
    between = torch.ones(n, n, dtype=s.dtype).tril(-1)
    return (log_z + torch.einsum("bhij,jk->bhik", log_beta, between)).exp()


@scheme("cope")
def cope(st, w, layer, n, scaling):
    """CoPE (Golovneva et al. 2024, facebookresearch/RAM's projects/cope): query i gives key
    j ≤ i the position p_ij = Σ_{k=j..i} σ(q_i·k_k/√d), clamped to npos − 1, and its score gains
    (q_i/√d)·e at p_ij, interpolated between ⌊p⌋ and ⌈p⌉. The positions read the scores: the
    piece is the layer's embeddings e (head_dim, npos), which Model.attention applies."""
    return {"cope": w["cope.emb"][layer].double()}


@scheme("learned")
def learned(st, w, layer, n, scaling):
    """A learned table wpe (GPT-2's): row t added to the embedding at position t."""
    if n > st["max_len"]:
        raise NotApplicable(f"learned positions: {n} positions, but the table has {st['max_len']} rows")
    return {"table": w["wpe"][:n].double()}


@scheme("sinusoidal")
def sinusoidal(st, w, layer, n, scaling):
    """Vaswani et al. 2017: PE(t, 2i) = sin(t/10000^(2i/d)), PE(t, 2i+1) = cos(t/10000^(2i/d))."""
    d = st["d_model"]
    t = torch.arange(n, dtype=torch.float64)[:, None]
    angle = t / 10000 ** (torch.arange(0, d, 2, dtype=torch.float64) / d)[None, :]
    pe = torch.zeros(n, d, dtype=torch.float64)
    pe[:, 0::2], pe[:, 1::2] = angle.sin(), angle.cos()[:, :d // 2]
    return {"table": pe}


@scheme("nope")
def nope(st, w, layer, n, scaling):
    """NoPE: the causal mask alone."""
    return {}


# ---------------------------------------------------------------- attention temperatures

def temperature(att, w, layer, heads, n):
    """The factor on each query's scores, (heads, n), or None: logn, Qwen's logn_attn,
    max(1, log(i+1)/log(L)); logn_train, Chiang & Cholak 2022's log(i+1); ssmax,
    Scalable-Softmax (Nakanishi 2025), s_h·log(i+1) with s learned per head and layer."""
    scale = att["scale"]
    log_i = torch.log(torch.arange(1, n + 1, dtype=torch.float64))
    if scale == "none":
        return None
    if scale == "logn":
        return (log_i / math.log(att["train_len"])).clamp(min=1).expand(heads, n)
    if scale == "logn_train":
        return log_i.expand(heads, n)
    if scale == "ssmax":
        return w[f"h{layer}.ssmax"].double()[:, None] * log_i[None, :]
    raise ValueError(f"attention temperature {scale!r}: this loader knows none, logn, logn_train, ssmax")


def softpick(x, eps=1e-8):
    """Softpick (Zuhri et al. 2025, the reference's naive softpick): ReLU(e^x − 1) over
    Σ|e^x − 1| + eps, against the row's maximum; masked keys, at −inf, count for nothing."""
    m = x.max(-1, keepdim=True).values
    u = torch.exp(x - m) - torch.exp(-m)
    a = torch.where(x.isfinite(), u.abs(), torch.zeros_like(u))
    return F.relu(u) / (a.sum(-1, keepdim=True) + eps)


# ---------------------------------------------------------------- the model

class Model:
    """The exported transformer, from its config and weights."""

    def __init__(self, config, weights, dtype=torch.float64):
        self.config, self.dtype = config, dtype
        self.w = {k: v.to(dtype) for k, v in weights.items()}
        m = config["model"]
        self.d, self.layers, self.heads, self.head_dim = m["d_model"], m["layers"], m["heads"], m["head_dim"]
        self.eps = m["layer_norm_eps"]
        if m["activation"] != "gelu_tanh" or m["norm"] != "pre" or m["tied_head"]:
            raise ValueError(f"model {m}: this loader builds pre-LayerNorm blocks, a tanh GELU and an untied head")
        if config["attention"].get("gate", "none") not in ("none", "elementwise", "headwise"):
            raise ValueError(f"attention gate {config['attention']['gate']!r}: this loader knows none, elementwise, headwise")
        if config["attention"].get("normaliser", "softmax") not in ("softmax", "softpick"):
            raise ValueError(f"attention normaliser {config['attention']['normaliser']!r}: this loader knows softmax, softpick")
        pos = config["position"]
        if pos.get("distance_map"):
            raise ValueError(f"distance map {pos['distance_map'].get('type')!r}: this loader scores without distance maps; "
                             "export the run without position.distance_map to score its model plainly")
        self.slots = pos.get("layers") or [{"scheme": pos["scheme"], "settings": pos["settings"] or {}}] * self.layers
        for s in self.slots:
            if s["scheme"] not in SCHEMES:
                raise ValueError(f"position scheme {s['scheme']!r}: this loader knows {', '.join(sorted(SCHEMES))}; "
                                 f"add its function with @scheme({s['scheme']!r}) in a file given with --plugin (docs/export.md)")
        self.per_layer = bool(pos.get("layers"))
        for want in config["weights"]:
            if list(self.w[want["name"]].shape) != want["shape"]:
                raise ValueError(f"weight {want['name']}: shape {list(self.w[want['name']].shape)}, config.json says {want['shape']}")

    def slot_weights(self, layer):
        """The weights layer's scheme reads, by their names without a mix's hL. prefix, and the
        layer index into them (0 for a mix's slot, whose weights are its own)."""
        if not self.per_layer:
            return self.w, layer
        prefix = f"h{layer}."
        return {k[len(prefix):]: v for k, v in self.w.items() if k.startswith(prefix)}, 0

    def positions(self, n, scaling=None):
        """What the scheme adds at n positions: the table, and each layer's rotation, bias
        (heads, n, n), temperature (heads, n), forget gate's weights (W, b), stick-breaking (its
        attend_current, None for the softmax), contextual positions' embeddings (head_dim, npos)
        and the keys a sliding window leaves out, (n, n) True where i − j ≥ window (None for
        full attention)."""
        if scaling is not None and not any(s["scheme"] in ROTATING for s in self.slots):
            raise ValueError(f"scaling {scaling['type']}: the {self.config['position']['scheme']} scheme has no rotation to scale")
        table, per_layer = None, []
        for layer, slot in enumerate(self.slots):
            w, index = self.slot_weights(layer)
            sc = scaling if slot["scheme"] in ROTATING else None
            piece = SCHEMES[slot["scheme"]](slot["settings"], w, index, n, sc)
            table = piece.get("table", table)
            window = slot["settings"].get("window", 0)
            outside = distances(n) >= window if window else None
            per_layer.append((piece.get("rotation"), piece.get("bias"),
                              temperature(self.config["attention"], self.w, layer, self.heads, n), piece.get("forget"),
                              piece.get("stick"), piece.get("cope"), outside))
        cast = lambda x: None if x is None else x.to(self.dtype)
        out = []
        for rot, bias, temp, forget, stick, cope_emb, outside in per_layer:
            if rot is not None:
                rot = Rotation(cast(rot.cos), cast(rot.sin), rot.interleaved, cast(rot.key_cos), cast(rot.key_sin))
            if forget is not None:
                forget = tuple(cast(x) for x in forget)
            out.append((rot, cast(bias), cast(temp), forget, stick, cast(cope_emb), outside))
        return cast(table), out

    def layer_norm(self, x, name):
        return F.layer_norm(x, (self.d,), self.w[name + "_g"], self.w[name + "_b"], self.eps)

    def linear(self, x, w, b):
        return x @ self.w[w] + self.w[b]

    def attention(self, x, p, rotation, bias, temp, forget, stick, cope_emb, outside):
        B, n, _ = x.shape
        split = lambda y: y.view(B, n, self.heads, self.head_dim).transpose(1, 2)
        q, k, v = (split(self.linear(x, p + "w" + c, p + "b" + c)) for c in "qkv")
        if rotation is not None:
            q, k = rotation.queries(q), rotation.keys(k)
        s = q @ k.transpose(-1, -2) / math.sqrt(self.head_dim)
        raw = s
        if temp is not None:
            s = s * temp[:, :, None]
        if cope_emb is not None:
            # ContextPosSelfAttn.forward: gates of the scaled scores times the causal mask, their
            # sums from each key to the query, clamped, and the two gathers interpolated.
            gates = torch.sigmoid(raw) * torch.ones(n, n, dtype=raw.dtype).tril()
            pos = gates.flip(-1).cumsum(-1).flip(-1).clamp(max=cope_emb.shape[-1] - 1)
            z = (q / math.sqrt(self.head_dim)) @ cope_emb  # (B, heads, n, npos)
            floor, ceil = pos.floor(), pos.ceil()
            w = pos - floor
            s = s + z.gather(-1, ceil.long()) * w + z.gather(-1, floor.long()) * (1 - w)
        if bias is not None:
            s = s + bias
        if forget is not None:
            wf, bf = forget
            c = torch.cumsum(F.logsigmoid(x @ wf + bf), 1).transpose(1, 2)  # (B, heads, n)
            s = s + (c[..., :, None] - c[..., None, :])
        if outside is not None:
            # A sliding window (Hugging Face's sliding_window): the keys before it masked as the
            # future is, ahead of the normaliser; for stick-breaking, left out of the stick.
            s = s.masked_fill(outside, float("-inf"))
        if stick is not None:
            a = stick_breaking(s, stick, outside)
        elif self.config["attention"].get("sinks", False):
            # gpt-oss's sinks (Hugging Face gpt_oss eager_attention_forward): the head's logit
            # appended to every row after the mask, the softmax, the column dropped.
            s = s.masked_fill(torch.ones(n, n, dtype=torch.bool).triu(1), float("-inf"))
            sink = self.w[p + "sinks"].view(1, self.heads, 1, 1).expand(B, self.heads, n, 1).to(s.dtype)
            a = torch.softmax(torch.cat([s, sink], -1), -1)[..., :-1]
        elif self.config["attention"].get("normaliser", "softmax") == "softpick":
            a = softpick(s.masked_fill(torch.ones(n, n, dtype=torch.bool).triu(1), float("-inf")))
        else:
            future = torch.ones(n, n, dtype=torch.bool).triu(1)
            a = torch.softmax(s.masked_fill(future, float("-inf")), -1)
        o = (a @ v).transpose(1, 2)  # (B, n, heads, head_dim)
        gate = self.config["attention"].get("gate", "none")
        if gate != "none":
            # Gated attention (Qiu et al. 2025, qiuzh20/gated_attention's G1): σ of a projection of
            # the attention's input times its output, before wo; head-wise, one gate a head.
            g = torch.sigmoid(self.linear(x, p + "wg", p + "bg"))
            o = o * (g.view(B, n, self.heads, self.head_dim) if gate == "elementwise" else g[..., None])
        return self.linear(o.reshape(B, n, self.d), p + "wo", p + "bo")

    def logits(self, ids, positions=None):
        """The logits (batch, n, vocab) after each byte of ids (batch, n)."""
        n = ids.shape[1]
        table, layers = positions or self.positions(n)
        x = self.w["wte"][ids]
        if table is not None:
            x = x + table
        for layer, (rotation, bias, temp, forget, stick, cope_emb, outside) in enumerate(layers):
            p = f"h{layer}."
            x = x + self.attention(self.layer_norm(x, p + "ln1"), p, rotation, bias, temp, forget, stick, cope_emb, outside)
            h = F.gelu(self.linear(self.layer_norm(x, p + "ln2"), p + "w1", p + "b1"), approximate="tanh")
            x = x + self.linear(h, p + "w2", p + "b2")
        return self.linear(self.layer_norm(x, "lnf"), "whead", "bhead")

    def losses(self, ids, targets, positions=None):
        """−log p(target) of every position, (batch, n), in float64."""
        logp = torch.log_softmax(self.logits(ids, positions).double(), -1)
        return -logp.gather(-1, targets[..., None])[..., 0]


def load_plugin(path):
    """Runs a file of yours that registers schemes with @load.scheme(name): it imports this
    module as `load`, whether this file runs as a script or was imported."""
    sys.modules.setdefault("load", sys.modules[__name__])
    spec = importlib.util.spec_from_file_location(os.path.splitext(os.path.basename(path))[0], path)
    if spec is None or not os.path.isfile(path):
        raise ValueError(f"--plugin {path}: no such Python file")
    try:
        spec.loader.exec_module(importlib.util.module_from_spec(spec))
    except Exception as e:  # the user's code: any error is theirs, said in one line
        raise ValueError(f"--plugin {path}: {type(e).__name__}: {e}") from e


def load(folder, dtype=torch.float64):
    """The model exported to folder, its config.json checked against model.safetensors."""
    path = os.path.join(folder, "config.json")
    with open(path) as f:
        try:
            config = json.load(f)
        except (UnicodeDecodeError, json.JSONDecodeError) as e:
            raise ValueError(f"{path}: not JSON: {e}") from e
    if not isinstance(config, dict):
        raise ValueError(f"{path}: a JSON {type(config).__name__}, want the object cmd/export writes")
    if config.get("format") != FORMAT or config.get("version") != VERSION:
        raise ValueError(f"{folder}/config.json: format {config.get('format')} version {config.get('version')}, want {FORMAT} {VERSION}")
    for key, kind in (("model", dict), ("position", dict), ("attention", dict), ("eval", dict), ("weights", list), ("weights_sha256", str)):
        if not isinstance(config.get(key), kind):
            raise ValueError(f"{path}: {key}: {config.get(key)!r:.40}, want a JSON {'object' if kind is dict else kind.__name__}")
    path = os.path.join(folder, "model.safetensors")
    with open(path, "rb") as f:
        if hashlib.sha256(f.read()).hexdigest() != config["weights_sha256"]:
            raise ValueError(f"{path} is not the file config.json was written with (SHA-256 differs)")
    weights, _ = read_safetensors(path)
    try:
        return Model(config, weights, dtype)
    except ValueError as e:
        raise ValueError(f"{folder}: {e}") from e


# ---------------------------------------------------------------- the evaluation protocol

def validation_text(config, corpus=None, goroot=None):
    """The validation bytes cmd/eval scores (data.Load): the last 1/valid_every of a text
    corpus, or every valid_every-th non-test .go file of the gosrc packages."""
    d = config["data"]
    every = d["valid_every"]
    if d["corpus"] == "text":
        with open(corpus or d["path"], "rb") as f:
            text = f.read()
        return text[len(text) - len(text) // every:]
    if d["corpus"] != "gosrc":
        raise ValueError(f"corpus {d['corpus']!r}: this loader knows text and gosrc")
    root = goroot or subprocess.run(["go", "env", "GOROOT"], capture_output=True, text=True, check=True).stdout.strip()
    files = []
    for pkg in d["packages"]:
        folder = os.path.join(root, "src", *pkg.split("/"))
        with os.scandir(folder) as it:
            names = sorted(e.name for e in it if e.is_file(follow_symlinks=False)
                           and e.name.endswith(".go") and not e.name.endswith("_test.go"))
        files += [os.path.join(folder, name) for name in names]
    valid = bytearray()
    for i, path in enumerate(files):
        if i % every == every - 1:
            with open(path, "rb") as f:
                valid += f.read()
    return bytes(valid)


def windows(n, stride, tokens):
    """data.Plan: windows (start, score) of n bytes that score each of the first tokens targets
    once; the first scores all its n, each later one the targets no earlier window scored, the
    last moved back to end at tokens."""
    if not 0 < n <= tokens or not 0 < stride <= n:
        raise ValueError(f"length {n} with stride {stride} over {tokens} tokens")
    out, covered = [(0, n)], n
    while covered < tokens:
        start = min(covered + stride - n, tokens - n)
        out.append((start, start + n - covered))
        covered = start + n
    return out


def length_loss(model, valid, n, tokens, stride, batch_tokens, scaling=None):
    """(loss, None): the mean loss over the first tokens targets at length n, as cmd/eval
    scores them; (None, reason) for a length the scheme cannot handle."""
    if len(valid) < tokens + 1:
        raise ValueError(f"{tokens} tokens, but the validation text holds only {len(valid) - 1}")
    try:
        positions = model.positions(n, scaling)
    except NotApplicable as e:
        return None, str(e)
    ws = windows(n, stride or n, tokens)
    data = torch.tensor(list(valid[:tokens + 1]), dtype=torch.long)
    total, batch = 0.0, max(1, batch_tokens // n)
    with torch.no_grad():
        for first in range(0, len(ws), batch):
            chunk = ws[first:first + batch]
            ids = torch.stack([data[s:s + n] for s, _ in chunk])
            targets = torch.stack([data[s + 1:s + n + 1] for s, _ in chunk])
            losses = model.losses(ids, targets, positions)
            total += sum(float(losses[b, n - score:].sum()) for b, (_, score) in enumerate(chunk))
    loss = total / tokens
    return loss, None


def parse_scalings(spec, factor):
    """The scalings --scaling names, each at its defaults with factor; None for none."""
    out = []
    for name in spec.split(","):
        if name != "none" and name not in SCALINGS:
            raise ValueError(f"--scaling {name}: known: none, {', '.join(SCALINGS)}")
        out.append(None if name == "none" else {"type": name, "factor": factor, "params": {}})
    return out


def evaluate(folder, a):
    """The report of one export: its perplexity by scaling and length, as the flags ask."""
    model = load(folder, getattr(torch, a.dtype))
    cfg = model.config
    e = cfg["eval"]
    lengths = [int(x) for x in a.lengths.split(",")] if a.lengths else e["lengths"]
    tokens = a.tokens or e["tokens"]
    batch_tokens = max(e["batch_tokens"], max(lengths))
    if a.scaling:
        scalings = parse_scalings(a.scaling, a.factor)
    else:
        scalings = [None] + ([cfg["position"]["scaling"]] if cfg["position"]["scaling"] else [])
    valid = validation_text(cfg, a.corpus, a.goroot)
    results = []
    for sc in scalings:
        rows = []
        for n in lengths:
            loss, reason = length_loss(model, valid, n, tokens, e["stride"], batch_tokens, sc)
            rows.append({"length": n, "loss": loss, "perplexity": None if loss is None else math.exp(loss), "reason": reason})
        results.append({"scaling": scaling_name(sc), "lengths": rows})
    return {"folder": folder, "name": cfg["name"], "scheme": cfg["position"]["scheme"], "train_len": cfg["train_len"],
            "tokens": tokens, "protocol": e["protocol"], "lengths": lengths, "results": results}


def print_table(r):
    print(f"{r['name']}: {r['scheme']} scheme, trained at {r['train_len']} tokens; {r['tokens']} validation tokens, {r['protocol']}")
    heads = (f"{n} ({n / r['train_len']:g}x)" for n in r["lengths"])
    print(f"{'perplexity':<24}" + "".join(f" {h:>10}" for h in heads))
    for x in r["results"]:
        cells = ("n/a" if c["perplexity"] is None else f"{c['perplexity']:.3f}" for c in x["lengths"])
        print(f"{x['scaling']:<24}" + "".join(f" {c:>10}" for c in cells))


def positive(flag):
    """What reads a flag's whole number of at least 1, or says in one line what is wrong."""
    def parse(s):
        try:
            v = int(s)
        except ValueError:
            v = 0
        if v < 1:
            raise ValueError(f"{flag} {s}: want a whole number of at least 1")
        return v
    return parse


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("folders", nargs="+", metavar="folder",
                   help="a folder cmd/export wrote (config.json and model.safetensors); several are scored in turn")
    p.add_argument("--corpus", help="the text corpus's file (default: config.json's data.path)")
    p.add_argument("--goroot", help="the Go root whose sources the gosrc corpus reads (default: go env GOROOT)")
    p.add_argument("--lengths", help="comma-separated evaluation lengths (default: config.json's)")
    p.add_argument("--tokens", help="validation tokens scored at every length (default: config.json's)")
    p.add_argument("--scaling", help="comma-separated RoPE scalings at their defaults, none for plain: "
                   + ",".join(["none"] + list(SCALINGS)) + " (default: none, and the config's scaling as configured)")
    p.add_argument("--factor", default="auto", help="the scalings' factor: auto (n/L) or a number ≥ 1")
    p.add_argument("--dtype", default="float64", choices=["float64", "float32"])
    p.add_argument("--threads", default="1", help="torch threads (default 1)")
    p.add_argument("--json", action="store_true", help="print the results as JSON: a list, one report per folder")
    p.add_argument("--plugin", action="append", default=[], metavar="FILE",
                   help="a Python file that registers schemes of your own with @load.scheme(name) (repeatable)")
    a = p.parse_args(argv)
    # Checked here rather than by argparse, whose errors take two lines.
    a.threads = positive("--threads")(a.threads)
    if a.tokens is not None:
        a.tokens = positive("--tokens")(a.tokens)
    if a.lengths:
        a.lengths = ",".join(str(positive("--lengths")(x)) for x in a.lengths.split(","))
    if a.factor != "auto":
        try:
            ok = float(a.factor) >= 1 and math.isfinite(float(a.factor))
        except ValueError:
            ok = False
        if not ok:
            raise ValueError(f"--factor {a.factor}: want auto or a number of at least 1")
    for path in a.plugin:
        load_plugin(path)
    torch.set_num_threads(a.threads)
    if a.scaling:
        parse_scalings(a.scaling, a.factor)  # refused before any folder is read
    reports = [evaluate(folder, a) for folder in a.folders]
    if a.json:
        json.dump(reports, sys.stdout, indent=2)
        print()
        return
    for i, r in enumerate(reports):
        if i:
            print()
        print_table(r)


if __name__ == "__main__":
    try:
        main()
    except (OSError, ValueError, KeyError) as e:
        print(f"load.py: {e}", file=sys.stderr)
        sys.exit(2)
