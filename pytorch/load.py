#!/usr/bin/python3
"""Rebuild a model exported by cmd/export in PyTorch, and score it as cmd/eval does.

    go run ./cmd/export -checkpoint results/rope/model.ckpt -out results/rope/export
    python3 pytorch/load.py results/rope/export                      # perplexity by length
    python3 pytorch/load.py results/rope/export --scaling none,yarn --lengths 64,256
    python3 pytorch/load.py results/rope/export --json               # the numbers as JSON
    python3 pytorch/load.py results/rope/export results/alibi/export # several, torch loaded once

The model is the package extrapolate beside this file (a torch.nn.Module; pytorch/train.py
trains it): rebuilt from config.json and model.safetensors alone, from the formulas of the
papers each scheme follows (docs/schemes.md; each class names its source). Perplexity is scored
on the validation text cmd/eval scores, in the same windows, each length's line on stderr as it
is done.

It computes in float32 by default, the Go model's precision, which gives cmd/eval's perplexities
to the printed digits; --dtype float64 gives them to float32 rounding, about 1e-6 relative on
the loss, at about twice the time.

Standard library and torch only (Debian: apt-get install python3-torch; run with /usr/bin/python3).
"""
import importlib.util
import json
import os
import sys
import time

import blas
import cli

if __name__ == "__main__":
    blas.set_threads(sys.argv[1:])  # before torch is imported

import torch  # noqa: E402

import extrapolate.model  # noqa: E402
from extrapolate import Model, NotApplicable, SCALINGS, SCHEMES, distances, scheme  # noqa: E402,F401 (for --plugin files)
from extrapolate import load as load_export  # noqa: E402
from extrapolate.evaluate import evaluate, parse_scalings, print_table  # noqa: E402


def load(folder, dtype=torch.float64):
    """The model exported to folder, in dtype (extrapolate.load)."""
    return load_export(folder, dtype)


def load_plugin(path):
    """Runs a file of yours that registers schemes with @load.scheme(name): it imports this
    module as `load`, whether this file runs as a script or was imported."""
    sys.modules.setdefault("load", sys.modules[__name__])
    spec = importlib.util.spec_from_file_location(os.path.splitext(os.path.basename(path))[0], path)
    if spec is None or not os.path.isfile(path):
        raise ValueError(f"--plugin {path}: no such Python file")
    try:
        spec.loader.exec_module(importlib.util.module_from_spec(spec))
    except Exception as e:  # the user's code: any error is theirs, said in one line
        raise ValueError(f"--plugin {path}: {type(e).__name__}: {e}") from e


def parse_args(argv):
    p = cli.Parser(description=__doc__.split("\n\n")[0])
    p.add_argument("folders", nargs="+", metavar="folder",
                   help="a folder cmd/export wrote (config.json and model.safetensors); several are scored in turn")
    p.add_argument("--corpus", help="the text corpus's file (default: config.json's data.path)")
    p.add_argument("--goroot", help="the Go root whose sources the gosrc corpus reads (default: go env GOROOT)")
    p.add_argument("--lengths", help="comma-separated evaluation lengths (default: config.json's)")
    p.add_argument("--tokens", help="validation tokens scored at every length (default: config.json's)")
    p.add_argument("--scaling", help="comma-separated RoPE scalings at their defaults, none for plain: "
                   + ",".join(["none"] + list(SCALINGS)) + " (default: none, and the config's scaling as configured)")
    p.add_argument("--factor", default="auto", help="the scalings' factor: auto (n/L) or a number ≥ 1")
    p.add_argument("--dtype", default="float32", choices=["float32", "float64"],
                   help="float32 (default: the Go model's precision) or float64 (cmd/eval's numbers to float32 rounding)")
    p.add_argument("--threads", default="1", help="torch's own threads, for all but the matrix products (default 1: on 2 "
                   "cores 2 threads were slower, the more so beside another run)")
    p.add_argument("--blas-threads", default=str(blas.cores()), help="OpenBLAS's threads, for the matrix products "
                   "(default: the cores, %(default)s here; OPENBLAS_NUM_THREADS, when set, wins)")
    p.add_argument("--block-scores", default=str(extrapolate.model.BLOCK_SCORES),
                   help="attention scores computed at once, a block of queries against every key: a bound on memory "
                   "(default %(default)s; no number depends on it)")
    p.add_argument("--json", action="store_true", help="print the results as JSON: a list, one report per folder")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    p.add_argument("--plugin", action="append", default=[], metavar="FILE",
                   help="a Python file that registers schemes of your own with @load.scheme(name) (repeatable)")
    a = p.parse_args(argv)
    a.threads = cli.number("--threads")(a.threads)
    a.blas_threads = cli.number("--blas-threads")(a.blas_threads)
    a.block_scores = cli.number("--block-scores")(a.block_scores)
    if a.tokens is not None:
        a.tokens = cli.number("--tokens")(a.tokens)
    if a.lengths:
        a.lengths = [cli.number("--lengths")(x) for x in a.lengths.split(",")]
    cli.factor(a.factor)
    return a


def main(argv=None):
    a = parse_args(argv)
    for path in a.plugin:
        load_plugin(path)
    torch.set_num_threads(a.threads)
    extrapolate.model.BLOCK_SCORES = a.block_scores
    scalings = parse_scalings(a.scaling, a.factor) if a.scaling else None  # refused before any folder is read
    progress = None if a.quiet else lambda line: print(f"load.py: {line}", file=sys.stderr, flush=True)
    reports = []
    for folder in a.folders:
        start = time.monotonic()
        model = load(folder, getattr(torch, a.dtype))
        reports.append(evaluate(model, a.lengths, a.tokens, scalings, a.corpus, a.goroot, progress, folder))
        if progress:
            progress(f"{folder} scored in {time.monotonic() - start:.0f} s ({a.dtype}, {a.threads} torch threads, "
                     f"{os.environ.get('OPENBLAS_NUM_THREADS', '?')} OpenBLAS threads)")
    if a.json:
        json.dump(reports, sys.stdout, indent=2)
        print()
        return
    for i, r in enumerate(reports):
        if i:
            print()
        print_table(r, sys.stdout)


if __name__ == "__main__":
    cli.run("load.py", main)
