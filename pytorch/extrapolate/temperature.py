"""The attention temperatures (attention.scale): a factor on each query's scores. Each is a
Module whose forward(n) gives the factor (heads, n), or None for none; TEMPERATURES names them."""
import math

import torch
import torch.nn as nn


def log_positions(n, device=None):
    """log(i+1) for the queries i = 0..n−1, on device."""
    return torch.log(torch.arange(1, n + 1, dtype=torch.float64, device=device))


class Temperature(nn.Module):
    """A temperature of a layer: built from config.json's attention section, the heads, and the
    layer's weights of the temperature (Scalable-Softmax's hL.ssmax, by its name without the
    prefix)."""

    def __init__(self, attention, heads, weights):
        super().__init__()
        self.train_len, self.heads = attention["train_len"], heads

    def forward(self, n):
        return None


class LogN(Temperature):
    """Qwen's logn_attn, at inference only: max(1, log(i+1)/log(L))."""

    def forward(self, n):
        return (log_positions(n) / math.log(self.train_len)).clamp(min=1).expand(self.heads, n)


class LogNTrain(Temperature):
    """Chiang & Cholak 2022, in training too: log(i+1)."""

    def forward(self, n):
        return log_positions(n).expand(self.heads, n)


class SSMax(Temperature):
    """Scalable-Softmax (Nakanishi 2025): s_h·log(i+1), s learned per head and layer (the weight
    hL.ssmax)."""

    def __init__(self, attention, heads, weights):
        super().__init__(attention, heads, weights)
        self.ssmax = nn.Parameter(weights["ssmax"])

    def forward(self, n):
        return self.ssmax.double()[:, None] * log_positions(n, self.ssmax.device)[None, :]


TEMPERATURES = {"none": Temperature, "logn": LogN, "logn_train": LogNTrain, "ssmax": SSMax}


def build(attention, heads, weights):
    """The temperature attention.scale names, or a one-line error naming it."""
    cls = TEMPERATURES.get(attention["scale"])
    if cls is None:
        raise ValueError(f"attention temperature {attention['scale']!r}: this code knows {', '.join(TEMPERATURES)}")
    return cls(attention, heads, weights)
