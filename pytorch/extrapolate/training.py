"""Training as cmd/train trains (experiments/training): windows of the training text drawn at
random offsets, AdamW with decoupled weight decay on the weights config.json marks, each
weight's learning-rate multiple and floor, the gradients clipped to a global norm; the main
phase's learning rate warmed up linearly and decayed along a cosine to min_lr, a fine-tune's
held constant. Not the same draws as Go's (another generator), the same recipe."""
import math
import time
from dataclasses import dataclass
from typing import Optional

import torch
import torch.nn.functional as F


@dataclass
class Phase:
    """One phase of training: its name (train or finetune, as cmd/train names them), windows of
    seq_len bytes, batch of them a step, steps, the learning rate (peak, final and warmup steps;
    constant when min_lr is lr and warmup 0), and the RoPE scaling in force (None for none)."""
    name: str
    seq_len: int
    batch: int
    steps: int
    lr: float
    min_lr: float
    warmup: int = 0
    scaling: Optional[dict] = None

    def lr_at(self, step):
        """The learning rate of step (from 1), as model.Schedule.At."""
        if step <= self.warmup:
            return self.lr * step / self.warmup
        if step >= self.steps:
            return self.min_lr
        p = (step - self.warmup) / (self.steps - self.warmup)
        return self.min_lr + 0.5 * (self.lr - self.min_lr) * (1 + math.cos(math.pi * p))


class Diverged(Exception):
    """A gradient that is not finite: the weights were left as they were before the step."""


def optimizer(model, train):
    """AdamW over the model's weights, grouped as config.json's weights list marks them: decay
    (train.weight_decay or none) and lr_scale, the group's multiple of the learning rate, whose
    decoupled decay scales with it, as in model.AdamW."""
    marks = {w["name"]: w for w in model.config["weights"]}
    groups = {}
    for name, p in model.named_weights():
        m = marks[name]
        if "decay" not in m:
            raise ValueError(f"config.json: weights: {name} has no decay mark; export the checkpoint again with this version of cmd/export")
        key = (bool(m["decay"]), float(m.get("lr_scale") or 1))
        groups.setdefault(key, []).append(p)
    return torch.optim.AdamW(
        [{"params": ps, "weight_decay": train["weight_decay"] if decay else 0.0, "scale": scale} for (decay, scale), ps in groups.items()],
        lr=train["lr"], betas=(train["beta1"], train["beta2"]), eps=1e-8)


def floors(model):
    """(parameter, least value) of the weights config.json gives a floor (KERPLE's r1, r2)."""
    marks = {w["name"]: w for w in model.config["weights"]}
    return [(p, float(marks[n]["floor"])) for n, p in model.named_weights() if marks[n].get("floor") is not None]


class Windows:
    """Windows of a text at random offsets, as data.Sampler draws them: ids and the byte after
    each, from a generator of their own, seeded."""

    def __init__(self, text, seed, device):
        self.text = torch.frombuffer(bytearray(text), dtype=torch.uint8).long()
        self.gen = torch.Generator().manual_seed(seed)
        self.device = device

    def draw(self, batch, n):
        limit = len(self.text) - n - 1
        if limit <= 0:
            raise ValueError(f"{len(self.text)} training bytes are too few for windows of {n}")
        at = torch.randint(0, limit, (batch, 1), generator=self.gen) + torch.arange(n + 1)
        w = self.text[at]
        return w[:, :-1].to(self.device), w[:, 1:].to(self.device)


def run(model, phase, opt, windows, grad_clip, progress=None, log_every=10):
    """Trains model for the phase; returns its last logged mean loss and its seconds."""
    start, last, total, count = time.monotonic(), None, 0.0, 0
    clamp = floors(model)
    model.train()
    for step in range(1, phase.steps + 1):
        lr = phase.lr_at(step)
        for g in opt.param_groups:
            g["lr"] = lr * g["scale"]
        ids, targets = windows.draw(phase.batch, phase.seq_len)
        logits = model(ids, scaling=phase.scaling)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        params = [p for g in opt.param_groups for p in g["params"]]
        norm = torch.nn.utils.clip_grad_norm_(params, grad_clip if grad_clip > 0 else float("inf"))
        if not torch.isfinite(norm):
            raise Diverged(f"{phase.name} step {step}: the gradient is not finite (norm {float(norm)})")
        opt.step()
        with torch.no_grad():
            for p, least in clamp:
                p.clamp_(min=least)
        total, count = total + float(loss), count + 1
        if step % log_every == 0 or step == phase.steps:
            last, total, count = total / count, 0.0, 0
            if progress:
                took = time.monotonic() - start
                progress(f"{phase.name} step {step}/{phase.steps}: loss {last:.4f}, lr {lr:.3g}, {took / step:.3f} s/step")
    model.eval()
    return last, time.monotonic() - start
