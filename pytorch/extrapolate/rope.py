"""RoPE, xPos and the RoPE scalings (docs/schemes.md#rope-scaling). A scaling is a Module whose
forward maps RoPE's frequencies at n positions to scaled ones and the attention factor that
multiplies cos and sin; SCALINGS names them as position.RegisterScaling does in Go."""
import math

import torch
import torch.nn as nn

from .registry import Scheme, scheme


def rope_inv_freq(dim, base):
    """RoPE's frequency ladder (Su et al. 2021): pair i of the dim rotated dimensions turns by
    base^(-2i/dim) radians per position."""
    return base ** (-torch.arange(0, dim, 2, dtype=torch.float64) / dim)


class Scaling(nn.Module):
    """A RoPE scaling with its params (the type's fields, its defaults filled in): forward(inv,
    dim, base, train_len, n, s) → (frequencies, attention factor), s the factor at n."""
    defaults = {}

    def __init__(self, params):
        super().__init__()
        self.params = {**self.defaults, **params}


class Linear(Scaling):
    """Position interpolation (Chen et al. 2023): every frequency divided by s."""

    def forward(self, inv, dim, base, train_len, n, s):
        return inv / s, 1.0


class NTK(Scaling):
    """NTK-aware scaling (bloc97, 2023): the base raised to base·s^(dim/(dim−2))."""

    def forward(self, inv, dim, base, train_len, n, s):
        return rope_inv_freq(dim, base * s ** (dim / (dim - 2))), 1.0


class DynamicNTK(Scaling):
    """Dynamic NTK (HF's _compute_dynamic_ntk_parameters): for n > L,
    base·(s·n/L − (s−1))^(dim/(dim−2)); the plain ladder at or below the training length."""

    def forward(self, inv, dim, base, train_len, n, s):
        if n <= train_len:
            return inv, 1.0
        return rope_inv_freq(dim, base * (s * n / train_len - (s - 1)) ** (dim / (dim - 2))), 1.0


class YaRN(Scaling):
    """YaRN (Peng et al. 2023; HF's _compute_yarn_parameters): NTK-by-parts. The dimensions whose
    frequency turns more than beta_fast times over L keep it, those turning fewer than beta_slow
    times are interpolated (divided by s), a linear ramp between; the attention factor
    0.1·ln(s)+1 multiplies cos and sin."""
    defaults = {"beta_fast": 32.0, "beta_slow": 1.0, "truncate": True}

    def forward(self, inv, dim, base, train_len, n, s):
        def correction_dim(rotations):
            return dim * math.log(train_len / (rotations * 2 * math.pi)) / (2 * math.log(base))
        low, high = correction_dim(self.params["beta_fast"]), correction_dim(self.params["beta_slow"])
        if self.params.get("truncate", True):
            low, high = math.floor(low), math.ceil(high)
        low, high = max(low, 0), min(high, dim - 1)
        if low == high:
            high += 0.001
        ramp = ((torch.arange(dim // 2, dtype=torch.float64) - low) / (high - low)).clamp(0, 1)
        extrapolation = 1 - ramp
        freq = inv / s * (1 - extrapolation) + inv * extrapolation
        return freq, (0.1 * math.log(s) + 1) if s > 1 else 1.0


class Llama3(Scaling):
    """Llama 3's scaling (HF's _compute_llama3_parameters): wavelengths above
    L/low_freq_factor are divided by s, those below L/high_freq_factor kept, and those between
    blended with weight (L/wavelength − low)/(high − low) on the kept frequency."""
    defaults = {"low_freq_factor": 1.0, "high_freq_factor": 4.0, "original_max_position_embeddings": 0}

    def forward(self, inv, dim, base, train_len, n, s):
        old = self.params.get("original_max_position_embeddings") or train_len
        low, high = self.params["low_freq_factor"], self.params["high_freq_factor"]
        wave = 2 * math.pi / inv
        out = torch.where(wave > old / low, inv / s, inv)
        smooth = (old / wave - low) / (high - low)
        blended = (1 - smooth) * out / s + smooth * out
        medium = (wave >= old / high) & (wave <= old / low)
        return torch.where(medium, blended, out), 1.0


SCALINGS = {"linear": Linear, "ntk": NTK, "dynamic_ntk": DynamicNTK, "yarn": YaRN, "llama3": Llama3}


def factor_at(factor, n, train_len):
    """A scaling's factor at n positions: a number, or auto, max(1, n/L)."""
    return max(1.0, n / train_len) if factor == "auto" else float(factor)


def scaling_name(scaling):
    """A scaling as cmd/eval names it: none, or type(factor=auto|s)."""
    if scaling is None:
        return "none"
    f = scaling["factor"]
    return f"{scaling['type']}(factor={f if f == 'auto' else format(float(f), 'g')})"


def check_scaling(scaling, where):
    """Refuses, in one line naming where it was given, a scaling this code does not know."""
    if scaling is not None and scaling.get("type") not in SCALINGS:
        raise ValueError(f"{where}: scaling {scaling.get('type')!r}: this code knows {', '.join(SCALINGS)}")


class Rotation:
    """cos and sin (n, pairs) for the queries, and for the keys (different for xPos); pairs
    (j, j+pairs) of the head's first 2·pairs dimensions (rotate_half), or (2j, 2j+1)."""

    def __init__(self, cos, sin, interleaved, key_cos=None, key_sin=None):
        self.cos, self.sin, self.interleaved = cos, sin, interleaved
        self.key_cos = cos if key_cos is None else key_cos
        self.key_sin = sin if key_sin is None else key_sin

    def to(self, **kw):
        """The rotation with its tables cast or moved, as Tensor.to."""
        return Rotation(self.cos.to(**kw), self.sin.to(**kw), self.interleaved, self.key_cos.to(**kw), self.key_sin.to(**kw))

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
        s = factor_at(scaling["factor"], n, st["train_len"])
        inv, factor = SCALINGS[scaling["type"]](scaling.get("params", {}))(inv, dim, base, st["train_len"], n, s)
    if st.get("stopped", 0):
        inv = inv.clone()
        inv[len(inv) - st["stopped"]:] = 0
    return inv, factor


@scheme("rope")
class Rope(Scheme):
    """RoPE (Su et al. 2021): q and k of position t turned by t·inv_freq."""
    rotating = True

    def forward(self, layer, n, scaling):
        inv, factor = rope_frequencies(self.settings, scaling, n)
        angle = torch.arange(n, dtype=torch.float64)[:, None] * inv[None, :]
        return {"rotation": Rotation(factor * angle.cos(), factor * angle.sin(), self.settings["interleaved"])}


@scheme("xpos")
class XPos(Scheme):
    """xPos (Sun et al. 2022, torchscale's XPOS): RoPE, with pair i of the query at t scaled by
    ζ_i^(t/B) and of the key by ζ_i^(−t/B), ζ_i = (2i/d + γ)/(1 + γ), so that scores carry
    ζ_i^((t−s)/B) and fade with distance. Positions are centred on the window as torchscale
    centres them; the shift cancels in every score."""
    rotating = True

    def forward(self, layer, n, scaling):
        st = self.settings
        inv, factor = rope_frequencies(st, scaling, n)
        t = torch.arange(n, dtype=torch.float64)
        angle = t[:, None] * inv[None, :]
        dim, gamma = st["dim"], st["gamma"]
        zeta = (torch.arange(0, dim, 2, dtype=torch.float64) / dim + gamma) / (1 + gamma)
        up = zeta[None, :] ** ((t - n // 2)[:, None] / st["scale_base"])
        cos, sin = factor * angle.cos(), factor * angle.sin()
        return {"rotation": Rotation(cos * up, sin * up, st["interleaved"], cos / up, sin / up)}
