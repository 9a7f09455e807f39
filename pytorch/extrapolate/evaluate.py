"""Perplexity by length as cmd/eval scores it: the first `tokens` bytes of validation cut into
windows of each length (non-overlapping, or sliding with the config's stride), each byte
predicted from the earlier bytes of its window only."""
import math
import time

import torch

from .data import validation_text, windows
from .registry import NotApplicable
from .rope import SCALINGS, scaling_name

# The tokens of one forward call, below eval.batch_tokens: glibc maps every block over 32 MB
# afresh from the kernel, whose zeroed pages then cost more than the arithmetic, and 16384
# tokens' logits in float64 are 32 MB. Each window is scored apart from the others, so the
# batches change no number.
CALL_TOKENS = 8192


def length_loss(model, valid, n, tokens, stride, batch_tokens, scaling=None):
    """(loss, None): the mean loss over the first tokens targets at length n, as cmd/eval
    scores them; (None, reason) for a length the scheme cannot handle."""
    if len(valid) < tokens + 1:
        raise ValueError(f"{tokens} tokens, but the validation text holds only {len(valid) - 1}")
    with torch.no_grad():
        try:
            positions = model.positions(n, scaling)
        except NotApplicable as e:
            return None, str(e)
        ws = windows(n, stride or n, tokens)
        device = model.wte.device
        data = torch.tensor(list(valid[:tokens + 1]), dtype=torch.long)
        batch = max(1, min(batch_tokens, CALL_TOKENS) // n)
        total = 0.0
        for first in range(0, len(ws), batch):
            chunk = ws[first:first + batch]
            ids = torch.stack([data[s:s + n] for s, _ in chunk]).to(device)
            targets = torch.stack([data[s + 1:s + n + 1] for s, _ in chunk]).to(device)
            losses = model.losses(ids, targets, positions)
            # Each window's scored targets are its last `score`: a mask sums them at once.
            keep = torch.arange(n, device=device)[None, :] >= torch.tensor([n - score for _, score in chunk], device=device)[:, None]
            total += float(losses.masked_fill(~keep, 0).sum())
    return total / tokens, None


def parse_scalings(spec, factor):
    """The scalings --scaling names, each at its defaults with factor; None for none."""
    out = []
    for name in spec.split(","):
        if name != "none" and name not in SCALINGS:
            raise ValueError(f"--scaling {name}: known: none, {', '.join(SCALINGS)}")
        out.append(None if name == "none" else {"type": name, "factor": factor, "params": {}})
    return out


def evaluate(model, lengths=None, tokens=None, scalings=None, corpus=None, goroot=None, progress=None, folder=None):
    """The report of a model: its perplexity by scaling and length (by default the config's
    lengths and tokens, and none with the config's scaling). progress, when given, is called
    with a line after each length is scored."""
    cfg = model.config
    e = cfg["eval"]
    lengths = lengths or e["lengths"]
    tokens = tokens or e["tokens"]
    batch_tokens = max(e["batch_tokens"], max(lengths))
    if scalings is None:
        scalings = [None] + ([cfg["position"]["scaling"]] if cfg["position"]["scaling"] else [])
    valid = validation_text(cfg, corpus, goroot)
    results = []
    for sc in scalings:
        rows = []
        for n in lengths:
            start = time.monotonic()
            loss, reason = length_loss(model, valid, n, tokens, e["stride"], batch_tokens, sc)
            rows.append({"length": n, "loss": loss, "perplexity": None if loss is None else math.exp(loss), "reason": reason})
            if progress:
                ppl = "n/a" if loss is None else f"perplexity {math.exp(loss):.3f}"
                progress(f"{cfg['name']}: {scaling_name(sc)} at {n}: {ppl} ({time.monotonic() - start:.1f} s)")
        results.append({"scaling": scaling_name(sc), "lengths": rows})
    return {"folder": folder, "name": cfg["name"], "scheme": cfg["position"]["scheme"], "train_len": cfg["train_len"],
            "tokens": tokens, "protocol": e["protocol"], "lengths": lengths, "results": results}


def print_table(r, out):
    """The report as cmd/eval prints it: a row per scaling, a column per length."""
    print(f"{r['name']}: {r['scheme']} scheme, trained at {r['train_len']} tokens; {r['tokens']} validation tokens, {r['protocol']}", file=out)
    heads = (f"{n} ({n / r['train_len']:g}x)" for n in r["lengths"])
    print(f"{'perplexity':<24}" + "".join(f" {h:>10}" for h in heads), file=out)
    for x in r["results"]:
        cells = ("n/a" if c["perplexity"] is None else f"{c['perplexity']:.3f}" for c in x["lengths"])
        print(f"{x['scaling']:<24}" + "".join(f" {c:>10}" for c in cells), file=out)
