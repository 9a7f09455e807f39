#!/usr/bin/env python3
"""Golden values for position/position_test.go, computed apart from the Go code.

The RoPE scalings follow Hugging Face transformers' modeling_rope_utils.py
(_compute_default/linear/dynamic_ntk/yarn_parameters) line by line, in plain Python floats; the
static NTK-aware base is b*s**(d/(d-2)) (bloc97's post). ALiBi slopes are the paper's get_slopes.
The sinusoidal table is Vaswani et al.'s formula. T5's buckets are
relative_position_bucket (bidirectional=False); KERPLE's is its logarithmic bias; FIRE's is the
forward of the paper's reference module for one pair. Run: python3 position/testdata/golden.py
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


# --- Schemes with weights of their own -------------------------------------------------------

def t5_bucket(relative_position, num_buckets=32, max_distance=128):
    """T5's relative_position_bucket with bidirectional=False (Mesh TensorFlow / HF), where
    relative_position = memory_position - query_position."""
    n = -relative_position
    n = max(n, 0)
    max_exact = num_buckets // 2
    if n < max_exact:
        return n
    val = max_exact + int(math.log(n / max_exact) / math.log(max_distance / max_exact) * (num_buckets - max_exact))
    return min(val, num_buckets - 1)


def kerple_log(r1, r2, n):
    """KERPLE's logarithmic bias -r1*log(1 + r2*|i-j|) for distances 0..n-1."""
    return [-r1 * math.log(1 + r2 * d) for d in range(n)]


def fire(i, j, w1, b1, w2, b2, c, m, L0, eps=1e-6):
    """FIRE (Li et al. 2024), the paper's reference forward for one (query i, key j) pair:
    f(psi(i-j) / psi(max(i, |m*L0|))), psi(x) = log(|c*x| + 1), f = Linear -> ReLU -> Linear."""
    threshold = abs(m * L0)
    norm = max(float(i), threshold)
    x = math.log(abs(c * (i - j)) + 1) / (math.log(abs(c * norm) + 1) + eps)
    hidden = [max(0.0, w * x + b) for w, b in zip(w1, b1)]
    return [b2[h] + sum(hidden[k] * w2[k][h] for k in range(len(hidden))) for h in range(len(b2))]


if __name__ == "__main__":
    print("t5 buckets (32, 128):", {d: t5_bucket(-d) for d in [0, 15, 16, 17, 18, 20, 21, 31, 32, 33, 64, 100, 127, 128, 199]})
    print("t5 buckets (8, 20):", [t5_bucket(-d, 8, 20) for d in range(24)])
    print("kerple r1=0.7 r2=0.3:", kerple_log(0.7, 0.3, 5))
    w1, b1 = [1.5, -2.0, 0.5], [0.1, 0.8, -0.2]
    w2, b2 = [[0.3, -0.4], [0.2, 0.5], [-0.7, 0.1]], [0.05, -0.05]
    for (i, j) in [(0, 0), (3, 1), (7, 0), (12, 5), (20, 20), (20, 3)]:
        print("fire", (i, j), fire(i, j, w1, b1, w2, b2, c=0.1, m=1.0, L0=10))
    print("fire m=-0.5 c=-0.3 (30, 2):", fire(30, 2, w1, b1, w2, b2, c=-0.3, m=-0.5, L0=10))


def llama3(d, base, L, n, s, low_freq_factor=1.0, high_freq_factor=4.0, old_context_len=None):
    """HF's _compute_llama3_parameters, line by line in plain floats."""
    old_context_len = old_context_len or L
    inv_freq = default_inv_freq(d, base)
    low_freq_wavelen = old_context_len / low_freq_factor
    high_freq_wavelen = old_context_len / high_freq_factor
    out = []
    for f in inv_freq:
        wavelen = 2 * math.pi / f
        f_llama = f / s if wavelen > low_freq_wavelen else f
        smooth_factor = (old_context_len / wavelen - low_freq_factor) / (high_freq_factor - low_freq_factor)
        smoothed = (1 - smooth_factor) * f_llama / s + smooth_factor * f_llama
        is_medium = not (wavelen < high_freq_wavelen) and not (wavelen > low_freq_wavelen)
        out.append(smoothed if is_medium else f_llama)
    return out, 1.0


if __name__ == "__main__":
    print("llama3 d16 L64 s4:", llama3(16, 10000, 64, 256, 4)[0])
    print("llama3 d32 L128 s8 low 1 high 4:", llama3(32, 10000, 128, 512, 8)[0])
    print("llama3 d16 base 500 L32 s2.5 low 2 high 8 old 48:", llama3(16, 500, 32, 96, 2.5, 2, 8, 48)[0])


def xpos_tables(d, base, t, gamma=0.4, scale_base=512):
    """torchscale's XPOS at position t: scale = (arange(0, d, 2) + gamma*d) / ((1+gamma)*d),
    raised to t/scale_base for the queries and to -t/scale_base for the keys (downscale), times
    RoPE's cos and sin. Returns (q_cos, q_sin, k_cos, k_sin) per pair."""
    zeta = [(i + gamma * d) / ((1 + gamma) * d) for i in range(0, d, 2)]
    inv = default_inv_freq(d, base)
    up = [z ** (t / scale_base) for z in zeta]
    return ([u * math.cos(t * f) for u, f in zip(up, inv)], [u * math.sin(t * f) for u, f in zip(up, inv)],
            [math.cos(t * f) / u for u, f in zip(up, inv)], [math.sin(t * f) / u for u, f in zip(up, inv)])


if __name__ == "__main__":
    print("xpos d8 t=5 B=16:", xpos_tables(8, 10000, 5, scale_base=16))
    print("partial rope d16 fraction 0.5 (rotary_ndims 8):", default_inv_freq(8, 10000))


def proportional(head_dim, base, p, s=1.0):
    """p-RoPE: transformers' _compute_proportional_rope_parameters (rope_type "proportional")."""
    rope_angles = int(p * head_dim // 2)
    rotated = [1.0 / (base ** (i / head_dim)) for i in range(0, 2 * rope_angles, 2)]
    inv_freq = rotated + [0.0] * (head_dim // 2 - rope_angles)
    return [f / s for f in inv_freq]


if __name__ == "__main__":
    show("p-RoPE d16 p0.75", proportional(16, 10000, 0.75))
    show("p-RoPE d16 p0.3", proportional(16, 10000, 0.3))
    show("p-RoPE d32 p0.5 linear 4", proportional(32, 10000, 0.5, 4))
