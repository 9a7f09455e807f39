"""The schemes that add a bias to the scores by distance: ALiBi, Hard-ALiBi, T5, KERPLE, FIRE."""
import math

import torch

from .registry import Scheme, scheme


def distances(n, device=None):
    """δ = i − j for query i and key j (negative above the diagonal, masked anyway), on device
    (a scheme's weights', so that a model on a GPU computes its bias there)."""
    i = torch.arange(n, device=device)
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
class ALiBi(Scheme):
    """ALiBi: −m_h·(i − j) added to head h's scores."""

    def forward(self, layer, n, scaling):
        m = torch.tensor(alibi_slopes(len(self.settings["slopes"])), dtype=torch.float64)
        return {"bias": -m[:, None, None] * distances(n).clamp(min=0).double()}


@scheme("hard_alibi")
class HardALiBi(Scheme):
    """Hard-ALiBi (Jelassi et al. 2024; sjelassi/transformers_ssm_copy, hard_alibi_model.py): head
    h < masked_heads sees its h+1 latest keys, the rest masked by GPT-NeoX's masked_bias −1e9;
    the other heads see every key, with no position information."""

    def forward(self, layer, n, scaling):
        delta = distances(n).clamp(min=0)
        bias = torch.zeros(self.settings["heads"], n, n, dtype=torch.float64)
        for h in range(self.settings["masked_heads"]):
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
class T5(Scheme):
    """T5's learned bias: scale·table[bucket(i − j), h], one table for every layer (x-transformers'
    RelativePositionBias scales it by √head_dim). The table is the weight t5.bias."""

    def forward(self, layer, n, scaling):
        st, table = self.settings, self.w["t5.bias"]
        idx = torch.tensor([t5_bucket(d, st["buckets"], st["max_distance"]) for d in range(n)], device=table.device)
        by_distance = st["scale"] * table.double()[idx].T  # (heads, n)
        return {"bias": by_distance[:, distances(n, table.device).clamp(min=0)]}


@scheme("kerple")
class Kerple(Scheme):
    """KERPLE, logarithmic (Chi et al. 2022, ParallelKerpleLog): −r1·log(1 + r2·(i − j)), r1 and
    r2 per head and layer, clamped at 0.01 as the reference does before use."""

    def forward(self, layer, n, scaling):
        r1 = self.w["kerple.r1"][layer].double().clamp(min=0.01)
        r2 = self.w["kerple.r2"][layer].double().clamp(min=0.01)
        d = distances(n, r1.device).clamp(min=0).double()
        return {"bias": -r1[:, None, None] * torch.log1p(r2[:, None, None] * d)}


@scheme("fire")
class Fire(Scheme):
    """FIRE (Li et al. 2024, the paper's listing): f(ψ(i−j)/ψ(max(L, i))), ψ(x) = log(|c·x| + 1),
    f an MLP 1 → hidden (ReLU) → heads, the threshold L = |m·L0|, ε = 1e-6 on the denominator."""

    def forward(self, layer, n, scaling):
        w = self.w
        c, m = w["fire.c"][layer].double(), w["fire.m"][layer].double()
        w1, b1 = w["fire.w1"][layer].double(), w["fire.b1"][layer].double()
        w2, b2 = w["fire.w2"][layer].double(), w["fire.b2"][layer].double()
        pos = torch.arange(n, dtype=torch.float64, device=c.device)
        rel = torch.log(torch.abs(c * (pos[:, None] - pos[None, :]).clamp(min=0)) + 1)
        norm = torch.log(torch.abs(c * torch.maximum(pos, torch.abs(m * self.settings["l0"]))) + 1) + 1e-6
        x = (rel / norm[:, None])[..., None]                    # (n, n, 1)
        out = torch.relu(x * w1 + b1) @ w2 + b2                 # (n, n, heads)
        return {"bias": out.permute(2, 0, 1)}
