#!/usr/bin/python3
"""Zoology's MQAR cell in one file, to set beside this project's trainer (docs/tasks.md,
"MQAR in Zoology's layout"): after HazyResearch/zoology's model.py, mixers/attention.py,
mixers/mlp.py, train.py and data/multiquery_ar.py.

The data: 4 pairs, then each key asked once at a power-law slot among random tokens (power_a
0.01), 64 tokens, keys and values from the two halves of the vocabulary, the values hidden
(each answer is a target, the byte after it noise), 10000 training examples (seed 0) and 1000
held out (seed 1). --show puts each value after its query, as the first mqar of this project
did; --tag puts a constant tag, mqar:, before the pairs (the window is then 69 tokens).

Zoology's model (the default): learned positions; pre-LN blocks of causal attention and a 4x
GELU MLP; tied embeddings; GPT-2's initialisation; AdamW at 1e-3, weight decay 0.1, a cosine
over the epochs, no warmup, no clipping; embedding and attention dropout 0.1. Stops once 99% of
the held-out answers are right.

--ours EXPORT trains this project's model instead, an untrained export (cmd/export -config) of
a run's config, by that config's recipe (pytorch/extrapolate/training.py: AdamW, warmup and
cosine, clipping, the config's batch) for --steps steps on the same training examples, drawn at
random (--seed), and scores the held-out ones at the end. Its weights are the export's: export
the config with -set seed=N for another draw of them.

    /usr/bin/python3 pytorch/zoology_mqar.py --d-model 64 --epochs 100 --vocab 128 --heads 1
    go run ./cmd/export -config results/tasks/runs/rope_mqar-s1/config.yaml -out /tmp/rope_mqar
    /usr/bin/python3 pytorch/zoology_mqar.py --ours /tmp/rope_mqar --steps 6000 [--show] [--tag]

--windows N prints N held-out windows instead of training, one a line: the tokens, then the
targets (-100 where there is none), as space-separated numbers. Bad input is one line on
stderr and exit status 2.
"""
import math
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

import cli

L, PAIRS, NTRAIN, NTEST, B, TAG = 64, 4, 10000, 1000, 32, b"mqar:"


def parse_args(argv):
    p = cli.Parser(description=__doc__.split("\n\n")[0])
    p.add_argument("--d-model", default="64", help="Zoology's model: its width (default 64)")
    p.add_argument("--epochs", default="100", help="Zoology's model: epochs at most (default 100)")
    p.add_argument("--heads", default="1", help="Zoology's model: attention heads (default 1)")
    p.add_argument("--vocab", default="128", help="tokens: keys from 1 to vocab/2-1, values from vocab/2 (default 128)")
    p.add_argument("--ours", metavar="EXPORT", help="train this untrained export of cmd/export instead of Zoology's model")
    p.add_argument("--steps", default="6000", help="--ours: training steps (default 6000)")
    p.add_argument("--show", action="store_true", help="put each value after its query in the window")
    p.add_argument("--tag", action="store_true", help="put the tag mqar: before the pairs")
    p.add_argument("--seed", default="1", help="--ours: the seed of the order it reads the examples in (default 1); "
                   "its weights are the export's, drawn from its config's seed")
    p.add_argument("--windows", help="print this many held-out windows and stop")
    a = p.parse_args(argv)
    for flag, least in (("d_model", 1), ("epochs", 1), ("heads", 1), ("vocab", 16), ("steps", 1), ("seed", 0), ("windows", 1)):
        v = getattr(a, flag)
        if v is not None:
            setattr(a, flag, cli.number("--" + flag.replace("_", "-"), int, least)(v))
    if a.d_model % a.heads:
        raise ValueError(f"--heads {a.heads}: want a divisor of --d-model {a.d_model}")
    if a.ours is not None and a.vocab > 256:
        raise ValueError(f"--vocab {a.vocab}: this project's model reads bytes, want at most 256")
    return a


def mqar(n, seed, V, show=False, tag=False, a=0.01):
    """n windows and their targets, as zoology/data/multiquery_ar.py draws them."""
    np.random.seed(seed)
    ctx = PAIRS * 2
    kc, vc = np.arange(1, V // 2), np.arange(V // 2, V)
    keys = np.apply_along_axis(np.random.choice, 1, np.tile(kc, (n, 1)), replace=False, size=PAIRS)
    vals = np.apply_along_axis(np.random.choice, 1, np.tile(vc, (n, 1)), replace=False, size=PAIRS)
    kvs = np.zeros((n, ctx), dtype=np.int64)
    kvs[:, 0::2], kvs[:, 1::2] = keys, vals
    space = (L - ctx) // 2
    p = a * np.arange(1, space + 1) ** (a - 1)
    p = p / p.sum()
    gaps = np.apply_along_axis(np.random.choice, 1, np.stack([np.arange(space)] * n), replace=False, p=p, size=PAIRS)
    q = np.zeros((n, L - ctx + 1), dtype=np.int64)
    np.put_along_axis(q, gaps * 2, values=keys, axis=1)
    if show:  # the byte after each query is its value, not noise
        np.put_along_axis(q, gaps * 2 + 1, values=vals, axis=1)
    ex = np.concatenate([kvs, q], axis=1)
    lab = np.full((n, L + 1), -100, dtype=np.int64)
    np.put_along_axis(lab, gaps * 2 + ctx + 1, values=vals, axis=1)
    x, y = torch.tensor(ex[:, :-1]), torch.tensor(lab[:, 1:])
    x[x == 0] = torch.randint(V, size=x.shape)[x == 0]
    if tag:
        x = torch.cat([torch.tensor(list(TAG)).expand(n, -1), x], 1)
        y = torch.cat([torch.full((n, len(TAG)), -100), y], 1)
    return x, y


class Block(nn.Module):
    def __init__(s, D, H):
        super().__init__()
        s.D, s.H = D, H
        s.n1, s.n2 = nn.LayerNorm(D), nn.LayerNorm(D)
        s.Wqkv, s.out_proj = nn.Linear(D, 3 * D), nn.Linear(D, D)
        s.fc1, s.fc2 = nn.Linear(D, 4 * D), nn.Linear(4 * D, D)

    def forward(s, r):
        h = s.n1(r)
        n, t = h.shape[:2]
        q, k, v = (u.view(n, t, s.H, s.D // s.H).transpose(1, 2) for u in s.Wqkv(h).chunk(3, -1))
        sc = q @ k.transpose(-1, -2) / math.sqrt(s.D // s.H) + torch.triu(torch.full((t, t), -10000.0), 1)
        att = F.dropout(torch.softmax(sc, -1), 0.1, s.training)
        r = r + s.out_proj((att @ v).transpose(1, 2).reshape(n, t, s.D))
        return r + s.fc2(F.gelu(s.fc1(s.n2(r))))


class Model(nn.Module):
    def __init__(s, D, H, V, n):
        super().__init__()
        s.wte, s.wpe = nn.Embedding(V, D), nn.Embedding(n, D)
        s.blocks = nn.ModuleList([Block(D, H), Block(D, H)])
        s.ln_f = nn.LayerNorm(D)
        for m in s.modules():
            if isinstance(m, nn.Linear):
                nn.init.normal_(m.weight, std=0.02)
                nn.init.zeros_(m.bias)
            elif isinstance(m, nn.Embedding):
                nn.init.normal_(m.weight, std=0.02)
        for b in s.blocks:
            nn.init.normal_(b.out_proj.weight, std=0.02 / math.sqrt(2 * 2))
            nn.init.normal_(b.fc2.weight, std=0.02 / math.sqrt(2 * 2))

    def forward(s, x):
        r = F.dropout(s.wte(x) + s.wpe(torch.arange(x.shape[1])), 0.1, s.training)
        for b in s.blocks:
            r = b(r)
        return s.ln_f(r) @ s.wte.weight.T


def score(m, x, y):
    """The share of held-out answers right, and of windows with every answer right."""
    m.eval()
    with torch.no_grad():
        pred = m(x).argmax(-1)
    mask = y != -100
    return float((pred[mask] == y[mask]).float().mean()), float(((pred == y) | ~mask).all(-1).float().mean())


def zoology(a, train, test):
    """Trains Zoology's model by Zoology's recipe, a line an epoch."""
    (xtr, ytr), (xte, yte) = train, test
    m = Model(a.d_model, a.heads, a.vocab, xtr.shape[1])
    opt = torch.optim.AdamW(m.parameters(), lr=1e-3, weight_decay=0.1)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=a.epochs, eta_min=0.0)
    start, steps = time.monotonic(), 0
    for ep in range(a.epochs):
        m.train()
        perm = torch.randperm(NTRAIN)
        for i in range(0, NTRAIN, B):
            at = perm[i:i + B]
            loss = F.cross_entropy(m(xtr[at]).reshape(-1, a.vocab), ytr[at].reshape(-1))
            opt.zero_grad()
            loss.backward()
            opt.step()
            steps += 1
        sched.step()
        acc, exact = score(m, xte, yte)
        print(f"epoch {ep} steps {steps} loss {float(loss):.3f} acc {acc:.3f} exact {exact:.3f} "
              f"{time.monotonic() - start:.0f}s", flush=True)
        if acc > 0.99:
            break


class Examples:
    """The training examples drawn at random, batch at a time, as training.run draws windows;
    the windows' length is the examples'."""

    def __init__(self, x, y, seed):
        self.x, self.y = x, y
        self.gen = torch.Generator().manual_seed(seed)

    def draw(self, batch, n):
        at = torch.randint(0, len(self.x), (batch,), generator=self.gen)
        return self.x[at], self.y[at]


def ours(a, train, test):
    """Trains the export by its config's recipe for a.steps steps, then scores it."""
    import extrapolate
    from extrapolate import training
    model = extrapolate.load(a.ours, torch.float32)
    t = model.config["train"]
    phase = training.Phase("train", train[0].shape[1], t["batch_size"], a.steps, t["lr"], t["min_lr"], min(t["warmup"], a.steps))
    opt = training.optimizer(model, t)
    log = lambda line: print(line, file=sys.stderr, flush=True)  # noqa: E731
    loss, took = training.run(model, phase, opt, Examples(*train, a.seed), t["grad_clip"], log, 500)
    acc, exact = score(model, *test)
    print(f"{model.config['name']}: steps {a.steps} loss {loss:.3f} acc {acc:.3f} exact {exact:.3f} {took:.0f}s", flush=True)


def main(argv=None):
    a = parse_args(argv)
    torch.set_num_threads(1)
    torch.manual_seed(0)
    train, test = (mqar(n, seed, a.vocab, a.show, a.tag) for n, seed in ((NTRAIN, 0), (NTEST, 1)))
    if a.windows:
        for x, y in zip(*(u[:a.windows].tolist() for u in test)):
            print(" ".join(map(str, x)), "|", " ".join(map(str, y)))
        return
    (ours if a.ours else zoology)(a, train, test)


if __name__ == "__main__":
    cli.run("zoology_mqar.py", main)
