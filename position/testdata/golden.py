#!/usr/bin/env python3
"""Golden values for position/position_test.go, computed apart from the Go code.

The RoPE scalings follow Hugging Face transformers' modeling_rope_utils.py
(_compute_default/linear/dynamic_ntk/yarn_parameters) line by line, in plain Python floats; the
static NTK-aware base is b*s**(d/(d-2)) (bloc97's post). ALiBi slopes are the paper's get_slopes.
The sinusoidal table is Vaswani et al.'s formula. Run: python3 position/testdata/golden.py
"""
import math


def default_inv_freq(d, base):
    return [1.0 / (base ** (i / d)) for i in range(0, d, 2)]


def linear(d, base, L, n, s):
    return [f / s for f in default_inv_freq(d, base)], 1.0


def ntk(d, base, L, n, s):
    return default_inv_freq(d, base * s ** (d / (d - 2))), 1.0


def dynamic_ntk(d, base, L, n, s):
    if n <= L:
        return default_inv_freq(d, base), 1.0
    base = base * ((s * n / L) - (s - 1)) ** (d / (d - 2))
    return default_inv_freq(d, base), 1.0


def yarn(d, base, L, n, s, beta_fast=32, beta_slow=1, truncate=True):
    def find_correction_dim(num_rotations):
        return (d * math.log(L / (num_rotations * 2 * math.pi))) / (2 * math.log(base))

    low = find_correction_dim(beta_fast)
    high = find_correction_dim(beta_slow)
    if truncate:
        low, high = math.floor(low), math.ceil(high)
    low, high = max(low, 0), min(high, d - 1)
    if low == high:
        high += 0.001
    pos_freqs = [base ** (i / d) for i in range(0, d, 2)]
    extrap = [1.0 / p for p in pos_freqs]
    interp = [1.0 / (s * p) for p in pos_freqs]
    out = []
    for i in range(d // 2):
        ramp = min(1.0, max(0.0, (i - low) / (high - low)))
        extrap_factor = 1 - ramp
        out.append(interp[i] * (1 - extrap_factor) + extrap[i] * extrap_factor)
    attn = 1.0 if s <= 1 else 0.1 * math.log(s) + 1.0
    return out, attn


def get_slopes(n):
    def get_slopes_power_of_2(n):
        start = 2 ** (-2 ** -(math.log2(n) - 3))
        ratio = start
        return [start * ratio ** i for i in range(n)]

    if math.log2(n).is_integer():
        return get_slopes_power_of_2(n)
    closest_power_of_2 = 2 ** math.floor(math.log2(n))
    return get_slopes_power_of_2(closest_power_of_2) + get_slopes(2 * closest_power_of_2)[0::2][: n - closest_power_of_2]


def sinusoidal(n, d):
    return [[math.sin(t / 10000 ** (2 * (j // 2) / d)) if j % 2 == 0 else math.cos(t / 10000 ** (2 * (j // 2) / d))
             for j in range(d)] for t in range(n)]


def show(name, xs):
    print(f"{name}: [" + ", ".join(f"{x:.12g}" for x in xs) + "]")


if __name__ == "__main__":
    for d, base, L, n, s in [(16, 10000, 128, 512, 4), (32, 10000, 64, 256, 8), (8, 500, 32, 96, 2.5)]:
        print(f"# d={d} base={base} L={L} n={n} s={s}")
        show("default", default_inv_freq(d, base))
        show("linear", linear(d, base, L, n, s)[0])
        print(f"ntk base' {base * s ** (d / (d - 2)):.12g}")
        show("ntk", ntk(d, base, L, n, s)[0])
        show("dynamic_ntk", dynamic_ntk(d, base, L, n, s)[0])
        f, a = yarn(d, base, L, n, s)
        show("yarn", f)
        print(f"yarn attention {a:.12g}")
        show("yarn truncate=false", yarn(d, base, L, n, s, truncate=False)[0])
        show("yarn beta 16/2", yarn(d, base, L, n, s, beta_fast=16, beta_slow=2)[0])
    print("# dynamic_ntk d=16 base=10000 L=128 n=256 s=4")
    show("dynamic_ntk", dynamic_ntk(16, 10000, 128, 256, 4)[0])
    for h in [1, 6, 8, 12, 16]:
        show(f"alibi {h}", get_slopes(h))
    print("# sinusoidal n=3 d=6")
    for row in sinusoidal(3, 6):
        show("row", row)
