"""The corpus as cmd/train and cmd/eval cut it (data.Load): its training and validation text,
and the windows the evaluation scores (data.Plan)."""
import os
import subprocess


def split(config, corpus=None, goroot=None):
    """(training bytes, validation bytes) of the corpus config.json's data section names: a text
    corpus's first len − len/valid_every bytes and the rest, or the non-test .go files of the
    gosrc packages, every valid_every-th in validation. corpus replaces a text corpus's file,
    goroot the Go root gosrc reads."""
    d = config["data"]
    every = d["valid_every"]
    if d["corpus"] == "text":
        with open(corpus or d["path"], "rb") as f:
            text = f.read()
        cut = len(text) - len(text) // every
        return text[:cut], text[cut:]
    if d["corpus"] != "gosrc":
        raise ValueError(f"corpus {d['corpus']!r}: this code knows text and gosrc")
    root = goroot or subprocess.run(["go", "env", "GOROOT"], capture_output=True, text=True, check=True).stdout.strip()
    files = []
    for pkg in d["packages"]:
        folder = os.path.join(root, "src", *pkg.split("/"))
        with os.scandir(folder) as it:
            names = sorted(e.name for e in it if e.is_file(follow_symlinks=False)
                           and e.name.endswith(".go") and not e.name.endswith("_test.go"))
        files += [os.path.join(folder, name) for name in names]
    train, valid = bytearray(), bytearray()
    for i, path in enumerate(files):
        with open(path, "rb") as f:
            (valid if i % every == every - 1 else train).extend(f.read())
    return bytes(train), bytes(valid)


def validation_text(config, corpus=None, goroot=None):
    """The validation bytes cmd/eval scores."""
    return split(config, corpus, goroot)[1]


def windows(n, stride, tokens):
    """data.Plan: windows (start, score) of n bytes that score each of the first tokens targets
    once; the first scores all its n, each later one the targets no earlier window scored, the
    last moved back to end at tokens."""
    if not 0 < n <= tokens or not 0 < stride <= n:
        raise ValueError(f"length {n} with stride {stride} over {tokens} tokens")
    out, covered = [(0, n)], n
    while covered < tokens:
        start = min(covered + stride - n, tokens - n)
        out.append((start, start + n - covered))
        covered = start + n
    return out
