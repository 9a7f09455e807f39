#!/usr/bin/env python3
"""Golden distances for dual_chunk (position/distancemap_test.go), computed apart from the Go code.

This follows HKUNLP/ChunkLlama's chunkllama_attn_replace.py line by line, with positions in
place of rotated tensors: the tables of ChunkLlamaRotaryEmbedding._set_cos_sin_cache (q_t, qc_t,
k_t), the prefill loop of forward (intra, successive and inter-chunk flash attentions, merged by
their log-sum-exps) and its decoding path (one query against a key cache), with the defaults of
replace_with_chunkllama. For each (query i, key j) it records the position the query and the key
are rotated at; their difference is the distance RoPE sees. Both paths must agree.
Run: python3 position/testdata/dca_golden.py
"""


def tables(chunk_size, local_window, seq_len):
    chunk_len = chunk_size - local_window
    q_t = list(range(chunk_len))
    qc_t = [min(t + chunk_len, chunk_size) for t in q_t]
    k_t = [t % chunk_len for t in range(seq_len)]
    return chunk_len, q_t, qc_t, k_t


def prefill(chunk_size, local_window, kv_seq_len):
    """Distance of every causal (i, j) pair, as forward's prefill branch scores it."""
    chunk_len, q_t, qc_t, k_t = tables(chunk_size, local_window, kv_seq_len)
    position_ids = [t % chunk_len for t in range(kv_seq_len)]
    dist = {}

    def attend(queries, keys, qtab, qpos, causal):
        for a, i in enumerate(queries):
            for b, j in enumerate(keys):
                if causal and b > a:
                    continue
                assert (i, j) not in dist, "a pair scored twice"
                dist[(i, j)] = qtab[qpos(i)] - k_t[j]

    first = list(range(min(chunk_len, kv_seq_len)))
    attend(first, first, q_t, lambda i: position_ids[i], True)
    prev = first
    remain = kv_seq_len - chunk_len
    while remain > 0:
        begin = kv_seq_len - remain
        end = begin + min(chunk_len, remain)
        cur = list(range(begin, end))
        attend(cur, cur, q_t, lambda i: position_ids[i], True)
        attend(cur, prev, qc_t, lambda i: position_ids[i], False)
        if begin - len(prev) > 0:
            attend(cur, list(range(begin - len(prev))), qc_t, lambda i: position_ids[chunk_len - 1], False)
        prev = cur
        remain -= chunk_len
    return dist


def decode(chunk_size, local_window, i):
    """Distances of query i to keys 0..i, as forward's decoding branch scores it."""
    chunk_len, q_t, qc_t, k_t = tables(chunk_size, local_window, i + 1)
    kv_seq_len = i + 1
    pid = i % chunk_len
    n = (kv_seq_len - 1) // chunk_len
    dist = {}
    for j in range(chunk_len * n, kv_seq_len):
        dist[j] = q_t[pid] - k_t[j]
    if n >= 1:
        for j in range(chunk_len * (n - 1), chunk_len * n):
            dist[j] = qc_t[pid] - k_t[j]
    if n >= 2:
        for j in range(chunk_len * (n - 1)):
            dist[j] = qc_t[chunk_len - 1] - k_t[j]
    return dist


def defaults(pretraining_length):
    return pretraining_length * 3 // 4, pretraining_length // 16


CASES = [
    # (training length L, or None with chunk_size and local_window given, query, key)
    (64, None, None, 43, 0), (64, None, None, 44, 0), (64, None, None, 48, 0),
    (64, None, None, 49, 0), (64, None, None, 49, 5), (64, None, None, 100, 0),
    (64, None, None, 100, 43), (64, None, None, 100, 44), (64, None, None, 100, 88),
    (64, None, None, 130, 30), (64, None, None, 130, 87), (64, None, None, 131, 87),
    (1024, None, None, 5000, 17), (1024, None, None, 5000, 4000), (1024, None, None, 5000, 4500),
    (None, 10, 6, 9, 0), (None, 10, 6, 14, 3), (None, 10, 6, 17, 2),
]

if __name__ == "__main__":
    for L, cs, lw, i, j in CASES:
        if L is not None:
            cs, lw = defaults(L)
        p = prefill(cs, lw, i + 1)
        d = decode(cs, lw, i)
        assert all(p[(i, k)] == d[k] for k in range(i + 1)), (cs, lw, i)
        print(f"L={L} chunk_size={cs} local_window={lw} i={i} j={j}: distance {p[(i, j)]} (true {i - j})")
