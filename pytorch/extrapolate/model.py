"""The exported transformer as a torch.nn.Module: a byte-level decoder with pre-LayerNorm blocks
of causal multi-head attention and a 4x tanh-GELU MLP, a final LayerNorm and an untied head;
linear layers are x @ W + b with W stored (in, out), as the export stores them. Its parameters
are the export's weights, each held by the Module that uses it; named_weights gives them back
under the export's names."""
import math
from dataclasses import dataclass
from typing import Optional

import torch
import torch.nn as nn
import torch.nn.functional as F

from . import registry, temperature
from .biases import distances
from .content import cope_bias, forget_sums, stick_breaking
from .rope import Rotation

# The weights of block L, by their names after its prefix hL. (the temperature's and the
# scheme's are their own).
BLOCK = ("ln1_g", "ln1_b", "wq", "bq", "wk", "bk", "wv", "bv", "wo", "bo", "ln2_g", "ln2_b", "w1", "b1", "w2", "b2")
GATE, SINKS = ("wg", "bg"), ("sinks",)
TOP = ("wte", "lnf_g", "lnf_b", "whead", "bhead")

# The scores computed at once: a block of queries against every key (Attention.forward).
BLOCK_SCORES = 1 << 20


@dataclass
class Positions:
    """What the position scheme and the temperature give one layer at n positions, in the
    model's dtype: the rotation of q and k, the bias (heads or 1, n, n), the temperature's
    factor (heads, n), FoX's gate weights, stick-breaking's attend_current (None for another
    normaliser), CoPE's embeddings, the keys a sliding window leaves out ((n, n), True where
    i − j ≥ window) and mask: the bias with the future and those keys at −inf, what the
    softmax, softpick and the sinks add to the scores."""
    rotation: Optional[Rotation]
    bias: Optional[torch.Tensor]
    temp: Optional[torch.Tensor]
    forget: Optional[tuple]
    stick: Optional[bool]
    cope: Optional[torch.Tensor]
    outside: Optional[torch.Tensor]
    mask: torch.Tensor


class Attention(nn.Module):
    """Causal multi-head attention with separate q, k, v and output projections, the gate and
    the sinks when the attention section has them, and the layer's temperature."""

    def __init__(self, config, w):
        super().__init__()
        m, att = config["model"], config["attention"]
        self.d, self.heads, self.head_dim = m["d_model"], m["heads"], m["head_dim"]
        self.gate, self.normaliser = att.get("gate", "none"), att.get("normaliser", "softmax")
        for name in ("wq", "bq", "wk", "bk", "wv", "bv", "wo", "bo") + (GATE if self.gate != "none" else ()):
            setattr(self, name, nn.Parameter(w[name]))
        self.sinks = nn.Parameter(w["sinks"]) if att.get("sinks", False) else None
        self.temperature = temperature.build(att, self.heads, w)

    def forward(self, x, p):
        B, n, _ = x.shape
        split = lambda y: y.view(B, n, self.heads, self.head_dim).transpose(1, 2)
        q, k, v = split(x @ self.wq + self.bq), split(x @ self.wk + self.bk), split(x @ self.wv + self.bv)
        if p.rotation is not None:
            q, k = p.rotation.queries(q), p.rotation.keys(k)
        c = None if p.forget is None else forget_sums(x, *p.forget)
        # The queries a block at a time, each row's scores apart from the others': no number
        # changes, and a block's scores stay small enough to be reused from the cache rather
        # than drawn afresh from the kernel (the scores of 16 windows of 1024 are 256 MB).
        step = max(1, BLOCK_SCORES // (B * self.heads * n))
        kt = k.transpose(-1, -2)
        o = torch.cat([self.rows(q[:, :, i:i + step], kt, v, c, p, i) for i in range(0, n, step)], 2)
        o = o.transpose(1, 2)  # (B, n, heads, head_dim)
        if self.gate != "none":
            # Gated attention (Qiu et al. 2025, qiuzh20/gated_attention's G1): σ of a projection of
            # the attention's input times its output, before wo; head-wise, one gate a head.
            g = torch.sigmoid(x @ self.wg + self.bg)
            o = o * (g.view(B, n, self.heads, self.head_dim) if self.gate == "elementwise" else g[..., None])
        return o.reshape(B, n, self.d) @ self.wo + self.bo

    def rows(self, q, kt, v, c, p, first):
        """The attention's output for the queries q (B, heads, rows, head_dim) of positions
        first.., given every key (kt transposed) and value, FoX's sums c, and the layer's
        Positions."""
        last = first + q.shape[2]
        s = q @ kt / math.sqrt(self.head_dim)
        raw = s
        if p.temp is not None:
            s = s * p.temp[:, first:last, None]
        if p.cope is not None:
            s = s + cope_bias(q, raw, p.cope, self.head_dim, first)
        if c is not None:
            s = s + (c[..., first:last, None] - c[..., None, :])
        return self.weights(s, p, first, last) @ v

    def weights(self, s, p, first, last):
        """The attention weights from the scores s (B, heads, rows, n) of the queries
        first..last: stick-breaking, the softmax with gpt-oss's sinks, softpick, or the softmax;
        the future and the keys a sliding window (Hugging Face's sliding_window) leaves out
        masked ahead of the normaliser."""
        if p.stick is not None:
            outside = None if p.outside is None else p.outside[first:last]
            if p.bias is not None:
                s = s + p.bias[..., first:last, :]
            if outside is not None:
                s = s.masked_fill(outside, float("-inf"))
            return stick_breaking(s, p.stick, outside, first)
        s = s + p.mask[..., first:last, :]
        if self.sinks is not None:
            # gpt-oss's sinks (Hugging Face gpt_oss eager_attention_forward): the head's logit
            # appended to every row after the mask, the softmax, the column dropped.
            B, _, rows, _ = s.shape
            sink = self.sinks.view(1, self.heads, 1, 1).expand(B, self.heads, rows, 1).to(s.dtype)
            return torch.softmax(torch.cat([s, sink], -1), -1)[..., :-1]
        if self.normaliser == "softpick":
            return softpick(s)
        return torch.softmax(s, -1)


def softpick(x, eps=1e-8):
    """Softpick (Zuhri et al. 2025, the reference's naive softpick): ReLU(e^x − 1) over
    Σ|e^x − 1| + eps, against the row's maximum; masked keys, at −inf, count for nothing."""
    m = x.max(-1, keepdim=True).values
    u = torch.exp(x - m) - torch.exp(-m)
    a = torch.where(x.isfinite(), u.abs(), torch.zeros_like(u))
    return F.relu(u) / (a.sum(-1, keepdim=True) + eps)


class Block(nn.Module):
    """One pre-LayerNorm block: x + attention(LN₁(x)), then x + MLP(LN₂(x)), the MLP
    d → 4d → d with a tanh GELU."""

    def __init__(self, config, w):
        super().__init__()
        self.eps = config["model"]["layer_norm_eps"]
        for name in ("ln1_g", "ln1_b", "ln2_g", "ln2_b", "w1", "b1", "w2", "b2"):
            setattr(self, name, nn.Parameter(w[name]))
        self.attention = Attention(config, w)

    def forward(self, x, p):
        d = x.shape[-1]
        x = x + self.attention(F.layer_norm(x, (d,), self.ln1_g, self.ln1_b, self.eps), p)
        h = F.gelu(F.layer_norm(x, (d,), self.ln2_g, self.ln2_b, self.eps) @ self.w1 + self.b1, approximate="tanh")
        return x + h @ self.w2 + self.b2


class Model(nn.Module):
    """The exported transformer, from config.json and the weights by their export names."""

    def __init__(self, config, weights):
        super().__init__()
        self.config = config
        m, att, pos = config["model"], config["attention"], config["position"]
        if m["activation"] != "gelu_tanh" or m["norm"] != "pre" or m["tied_head"]:
            raise ValueError(f"model {m}: this code builds pre-LayerNorm blocks, a tanh GELU and an untied head")
        if att.get("gate", "none") not in ("none", "elementwise", "headwise"):
            raise ValueError(f"attention gate {att['gate']!r}: this code knows none, elementwise, headwise")
        if att.get("normaliser", "softmax") not in ("softmax", "softpick"):
            raise ValueError(f"attention normaliser {att['normaliser']!r}: this code knows softmax, softpick")
        if pos.get("distance_map"):
            raise ValueError(f"distance map {pos['distance_map'].get('type')!r}: this code scores without distance maps; "
                             "export the run without position.distance_map to score its model plainly")
        for want in config["weights"]:
            got = weights.get(want["name"])
            if got is None or list(got.shape) != want["shape"]:
                raise ValueError(f"weight {want['name']}: shape {None if got is None else list(got.shape)}, config.json says {want['shape']}")
        self.layers, self.heads = m["layers"], m["heads"]
        for name in TOP:
            setattr(self, name, nn.Parameter(weights[name]))
        self.blocks = nn.ModuleList(Block(config, self.block_weights(weights, layer)) for layer in range(self.layers))
        self.per_layer = bool(pos.get("layers"))
        self.slots = pos.get("layers") or [{"scheme": pos["scheme"], "settings": pos["settings"] or {}}] * self.layers
        taken = set(self.own_names(weights))
        rest = {k: v for k, v in weights.items() if k not in taken}
        if self.per_layer:
            self.schemes = nn.ModuleList(
                registry.build(s["scheme"], s["settings"], {k[len(f"h{l}."):]: v for k, v in rest.items() if k.startswith(f"h{l}.")})
                for l, s in enumerate(self.slots))
        else:
            self.schemes = nn.ModuleList([registry.build(pos["scheme"], self.slots[0]["settings"], rest)])
        self.names = [w["name"] for w in config["weights"]]
        unread = set(weights) - set(self.all_weights())
        if unread:
            raise ValueError(f"weight {sorted(unread)[0]}: no part of the model reads it")
        unlisted = set(weights) - set(self.names)
        if unlisted:
            raise ValueError(f"weight {sorted(unlisted)[0]}: in the weights, not in config.json's list")

    def block_weights(self, weights, layer):
        """The weights of block layer (its attention's and temperature's with them), by their
        names without the prefix hL."""
        p = f"h{layer}."
        names = BLOCK + (GATE if self.config["attention"].get("gate", "none") != "none" else ())
        names += SINKS if self.config["attention"].get("sinks", False) else ()
        names += ("ssmax",) if self.config["attention"]["scale"] == "ssmax" else ()
        return {name: weights[p + name] for name in names if p + name in weights}

    def own_names(self, weights):
        """The export's names of the weights the model's own parts hold (not the scheme's)."""
        out = [n for n in TOP if n in weights]
        for layer in range(self.layers):
            out += [f"h{layer}.{n}" for n in self.block_weights(weights, layer)]
        return out

    def all_weights(self):
        """{export name: parameter} of every weight, the model's own, then the schemes'."""
        out = {n: getattr(self, n) for n in TOP}
        for layer, b in enumerate(self.blocks):
            for name, p in b.named_parameters():
                out[f"h{layer}.{name.split('.')[-1]}"] = p
        for i, s in enumerate(self.schemes):
            prefix = f"h{i}." if self.per_layer else ""
            for name, p in s.w.items():
                out[prefix + name] = p
        return out

    def named_weights(self):
        """[(export name, parameter)] of every weight, in the export's order."""
        w = self.all_weights()
        return [(n, w[n]) for n in self.names]

    def scheme_at(self, layer):
        """The scheme of a layer, and the index into its weights stacked by layer."""
        return (self.schemes[layer], 0) if self.per_layer else (self.schemes[0], layer)

    def positions(self, n, scaling=None):
        """The table added to the embeddings (or None) and each layer's Positions at n
        positions, in the model's dtype and on its device; a scaling applies to the rotating
        schemes (registry.NotApplicable for a length the scheme cannot take)."""
        rotating = [self.scheme_at(l)[0].rotating for l in range(self.layers)]
        if scaling is not None and not any(rotating):
            raise ValueError(f"scaling {scaling['type']}: the {self.config['position']['scheme']} scheme has no rotation to scale")
        dtype, device = self.wte.dtype, self.wte.device
        cast = lambda x: None if x is None else x.to(dtype=dtype, device=device)
        future = torch.ones(n, n, dtype=torch.bool, device=device).triu(1)
        table, out = None, []
        for layer, slot in enumerate(self.slots):
            s, index = self.scheme_at(layer)
            piece = s(index, n, scaling if rotating[layer] else None)
            table = piece.get("table", table)
            window = slot["settings"].get("window", 0)
            outside = (distances(n) >= window).to(device) if window else None
            bias = cast(piece.get("bias"))
            mask = torch.zeros(n, n, dtype=dtype, device=device) if bias is None else bias
            mask = mask.masked_fill(future if outside is None else future | outside, float("-inf"))
            rot = piece.get("rotation")
            forget = piece.get("forget")
            out.append(Positions(rotation=None if rot is None else rot.to(dtype=dtype, device=device), bias=bias,
                                 temp=cast(self.blocks[layer].attention.temperature(n)),
                                 forget=None if forget is None else tuple(cast(x) for x in forget),
                                 stick=piece.get("stick"), cope=cast(piece.get("cope")), outside=outside, mask=mask))
        return cast(table), out

    def forward(self, ids, positions=None, scaling=None):
        """The logits (batch, n, vocab) after each byte of ids (batch, n), at positions (from
        positions(n, scaling), computed here when not given)."""
        table, layers = positions or self.positions(ids.shape[1], scaling)
        x = self.wte[ids]
        if table is not None:
            x = x + table
        for block, p in zip(self.blocks, layers):
            x = block(x, p)
        return F.layer_norm(x, (x.shape[-1],), self.lnf_g, self.lnf_b, self.blocks[0].eps) @ self.whead + self.bhead

    def logits(self, ids, positions=None):
        """The logits (batch, n, vocab) after each byte of ids (batch, n)."""
        return self(ids, positions)

    def losses(self, ids, targets, positions=None):
        """−log p(target) of every position, (batch, n), in float64."""
        logp = torch.log_softmax(self(ids, positions).double(), -1)
        return -logp.gather(-1, targets[..., None])[..., 0]
