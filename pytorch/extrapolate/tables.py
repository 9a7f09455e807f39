"""The schemes that add a table to the token embeddings (learned, sinusoidal), and NoPE."""
import torch

from .registry import NotApplicable, Scheme, scheme


@scheme("learned")
class Learned(Scheme):
    """A learned table wpe (GPT-2's): row t added to the embedding at position t."""

    def forward(self, layer, n, scaling):
        if n > self.settings["max_len"]:
            raise NotApplicable(f"learned positions: {n} positions, but the table has {self.settings['max_len']} rows")
        return {"table": self.w["wpe"][:n].double()}


@scheme("sinusoidal")
class Sinusoidal(Scheme):
    """Vaswani et al. 2017: PE(t, 2i) = sin(t/10000^(2i/d)), PE(t, 2i+1) = cos(t/10000^(2i/d))."""

    def forward(self, layer, n, scaling):
        d = self.settings["d_model"]
        t = torch.arange(n, dtype=torch.float64)[:, None]
        angle = t / 10000 ** (torch.arange(0, d, 2, dtype=torch.float64) / d)[None, :]
        pe = torch.zeros(n, d, dtype=torch.float64)
        pe[:, 0::2], pe[:, 1::2] = angle.sin(), angle.cos()[:, :d // 2]
        return {"table": pe}


@scheme("nope")
class NoPE(Scheme):
    """NoPE: the causal mask alone."""
