"""The schemes whose positions read the content: FoX's forget gates, stick-breaking attention,
CoPE's contextual positions. Each gives the attention what it needs to apply itself there."""
import math

import torch
import torch.nn.functional as F

from .registry import Scheme, scheme


@scheme("fox")
class FoX(Scheme):
    """FoX (Lin et al. 2025, the reference's base model): each head's forget gate f_t =
    σ(x_t·W + b) of the layer's normalised input x_t, and the score of query i for key j ≤ i
    gains Σ_{l=j+1..i} log f_l = c_i − c_j, c = cumsum(log f) (forgetting_attention's reference).
    The gates read the content: the piece is the layer's W (d_model, heads) and b (heads), which
    the attention applies (forget_sums)."""

    def forward(self, layer, n, scaling):
        return {"forget": (self.w["fox.wf"][layer].double(), self.w["fox.bf"][layer].double())}


def forget_sums(x, wf, bf):
    """FoX's c (B, heads, n), whose c_i − c_j is the bias, from the layer's normalised input x
    (B, n, d)."""
    return torch.cumsum(F.logsigmoid(x @ wf + bf), 1).transpose(1, 2)


@scheme("stickbreaking")
class StickBreaking(Scheme):
    """Stick-breaking attention (Tan et al. 2025): no positions; the softmax is replaced by
    A_ij = σ(z_ij)·Π_{j<k<i}(1−σ(z_ik)) (j < k ≤ i and j ≤ i with attend_current), which
    the attention computes as the reference's naive sb_ref.stickbreaking does (stick_breaking).
    The piece is attend_current."""

    def forward(self, layer, n, scaling):
        return {"stick": bool(self.settings["attend_current"])}


def stick_breaking(s, attend_current, outside=None, first=0):
    """The stick-breaking weights of scores s (B, heads, rows, n) of the queries first.., as
    sb_ref.stickbreaking of shawntan/stickbreaking-attention computes them: log σ(z) where a
    query attends, log σ(−z) = log(1−σ(z)) summed over the keys between (an einsum with
    tril(−1)), then exp. The keys a window leaves out (outside, those rows) are unseen as the
    future is."""
    rows, n = s.shape[-2:]
    unseen = torch.ones(rows, n, dtype=torch.bool, device=s.device).triu(first + (1 if attend_current else 0))
    if outside is not None:
        unseen = unseen | outside
    log_z = F.logsigmoid(s).masked_fill(unseen, float("-inf"))
    log_beta = F.logsigmoid(-s).masked_fill(unseen, 0)
    between = torch.ones(n, n, dtype=s.dtype, device=s.device).tril(-1)
    return (log_z + torch.einsum("bhij,jk->bhik", log_beta, between)).exp()


@scheme("cope")
class CoPE(Scheme):
    """CoPE (Golovneva et al. 2024, facebookresearch/RAM's projects/cope): query i gives key
    j ≤ i the position p_ij = Σ_{k=j..i} σ(q_i·k_k/√d), clamped to npos − 1, and its score gains
    (q_i/√d)·e at p_ij, interpolated between ⌊p⌋ and ⌈p⌉. The positions read the scores: the
    piece is the layer's embeddings e (head_dim, npos), which the attention applies
    (cope_bias)."""

    def forward(self, layer, n, scaling):
        return {"cope": self.w["cope.emb"][layer].double()}


def cope_bias(q, raw, emb, head_dim, first=0):
    """CoPE's bias (ContextPosSelfAttn.forward) for the queries q of positions first..: gates of
    the scaled scores raw times the causal mask, their sums from each key to the query,
    clamped, and the two gathers interpolated."""
    rows, n = raw.shape[-2:]
    gates = torch.sigmoid(raw) * torch.ones(rows, n, dtype=raw.dtype, device=raw.device).tril(first)
    pos = gates.flip(-1).cumsum(-1).flip(-1).clamp(max=emb.shape[-1] - 1)
    z = (q / math.sqrt(head_dim)) @ emb  # (B, heads, n, npos)
    floor, ceil = pos.floor(), pos.ceil()
    w = pos - floor
    return z.gather(-1, ceil.long()) * w + z.gather(-1, floor.long()) * (1 - w)
