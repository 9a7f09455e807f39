#!/usr/bin/python3
"""Zoology's MQAR cell in one file, to set beside this project's trainer (docs/tasks.md,
"Tasks beyond the budget"): after HazyResearch/zoology's model.py, mixers/attention.py,
mixers/mlp.py, train.py and data/multiquery_ar.py. Learned positions; pre-LN blocks of causal
attention and a 4x GELU MLP; tied embeddings; GPT-2's initialisation; AdamW at 1e-3, weight decay
0.1, a cosine over the epochs, no warmup, no clipping; embedding and attention dropout 0.1. The
data: 4 pairs, then each key asked once at a power-law slot among random tokens (power_a 0.01),
64 tokens, keys and values from the two halves of the vocabulary, 10000 training examples
(seed 0) and 1000 held out (seed 1). Stops once 99% of the held-out answers are right.

    /usr/bin/python3 pytorch/zoology_mqar.py D_MODEL EPOCHS VOCAB HEADS
    /usr/bin/python3 pytorch/zoology_mqar.py 64 100 128 1
"""
import math, sys, time
import numpy as np, torch, torch.nn as nn, torch.nn.functional as F
torch.set_num_threads(1); torch.manual_seed(0)
D, EPOCHS = int(sys.argv[1]), int(sys.argv[2]); V, H = int(sys.argv[3]), int(sys.argv[4])
L, PAIRS, NTRAIN, NTEST, B = 64, 4, 10000, 1000, 32

def mqar(n, seed, a=0.01):
    np.random.seed(seed)
    ctx = PAIRS * 2
    kc, vc = np.arange(1, V // 2), np.arange(V // 2, V)
    keys = np.apply_along_axis(np.random.choice, 1, np.tile(kc, (n, 1)), replace=False, size=PAIRS)
    vals = np.apply_along_axis(np.random.choice, 1, np.tile(vc, (n, 1)), replace=False, size=PAIRS)
    kvs = np.zeros((n, ctx), dtype=np.int64); kvs[:, 0::2] = keys; kvs[:, 1::2] = vals
    space = (L - ctx) // 2
    p = a * np.arange(1, space + 1) ** (a - 1); p = p / p.sum()
    gaps = np.apply_along_axis(np.random.choice, 1, np.stack([np.arange(space)] * n), replace=False, p=p, size=PAIRS)
    q = np.zeros((n, L - ctx + 1), dtype=np.int64)
    np.put_along_axis(q, gaps * 2, values=keys, axis=1)
    ex = np.concatenate([kvs, q], axis=1)
    lab = np.full((n, L + 1), -100, dtype=np.int64)
    np.put_along_axis(lab, gaps * 2 + ctx + 1, values=vals, axis=1)
    x, y = torch.tensor(ex[:, :-1]), torch.tensor(lab[:, 1:])
    x[x == 0] = torch.randint(V, size=x.shape)[x == 0]
    return x, y

class Block(nn.Module):
    def __init__(s):
        super().__init__()
        s.n1, s.n2 = nn.LayerNorm(D), nn.LayerNorm(D)
        s.Wqkv, s.out_proj = nn.Linear(D, 3 * D), nn.Linear(D, D)
        s.fc1, s.fc2 = nn.Linear(D, 4 * D), nn.Linear(4 * D, D)
    def forward(s, r):
        h = s.n1(r); n = h.shape[0]
        q, k, v = (t.view(n, L, H, D // H).transpose(1, 2) for t in s.Wqkv(h).chunk(3, -1))
        sc = q @ k.transpose(-1, -2) / math.sqrt(D // H) + torch.triu(torch.full((L, L), -10000.0), 1)
        att = F.dropout(torch.softmax(sc, -1), 0.1, s.training)
        r = r + s.out_proj((att @ v).transpose(1, 2).reshape(n, L, D))
        return r + s.fc2(F.gelu(s.fc1(s.n2(r))))

class Model(nn.Module):
    def __init__(s):
        super().__init__()
        s.wte, s.wpe = nn.Embedding(V, D), nn.Embedding(L, D)
        s.blocks = nn.ModuleList([Block(), Block()]); s.ln_f = nn.LayerNorm(D)
        for m in s.modules():
            if isinstance(m, nn.Linear):
                nn.init.normal_(m.weight, std=0.02); nn.init.zeros_(m.bias)
            elif isinstance(m, nn.Embedding):
                nn.init.normal_(m.weight, std=0.02)
        for b in s.blocks:
            nn.init.normal_(b.out_proj.weight, std=0.02 / math.sqrt(2 * 2))
            nn.init.normal_(b.fc2.weight, std=0.02 / math.sqrt(2 * 2))
    def forward(s, x):
        r = F.dropout(s.wte(x) + s.wpe(torch.arange(L)), 0.1, s.training)
        for b in s.blocks:
            r = b(r)
        return s.ln_f(r) @ s.wte.weight.T

xtr, ytr = mqar(NTRAIN, 0); xte, yte = mqar(NTEST, 1)
m = Model(); opt = torch.optim.AdamW(m.parameters(), lr=1e-3, weight_decay=0.1)
sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=EPOCHS, eta_min=0.0)
start = time.monotonic(); steps = 0
for ep in range(EPOCHS):
    m.train(); perm = torch.randperm(NTRAIN)
    for i in range(0, NTRAIN, B):
        at = perm[i:i + B]; logits = m(xtr[at])
        loss = F.cross_entropy(logits.reshape(-1, V), ytr[at].reshape(-1))
        opt.zero_grad(); loss.backward(); opt.step(); steps += 1
    sched.step(); m.eval()
    with torch.no_grad():
        pred = m(xte).argmax(-1); mask = yte != -100
        acc = float((pred[mask] == yte[mask]).float().mean())
        exact = float(((pred == yte) | ~mask).all(-1).float().mean())
    print(f"epoch {ep} steps {steps} loss {float(loss):.3f} acc {acc:.3f} exact {exact:.3f} {time.monotonic()-start:.0f}s", flush=True)
    if acc > 0.99:
        break
