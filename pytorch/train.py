#!/usr/bin/python3
"""Train an export of cmd/export in PyTorch, and save it in the export's layout for cmd/import.

    go run ./cmd/export -checkpoint examples/checkpoints/rope_ntk.ckpt -out results/rope_ntk_export
    python3 pytorch/train.py results/rope_ntk_export --out results/rope_ntk_yarn256 \\
        --finetune-len 256 --finetune-steps 200 --scaling yarn --factor 4      # fine-tune at 4x
    go run ./cmd/export -config rope -out results/rope_untrained
    python3 pytorch/train.py results/rope_untrained --out results/rope_torch   # from scratch
    go run ./cmd/import -export results/rope_torch

An untrained export (cmd/export -config) is trained as its config's train section says: the
main phase at train.seq_len (--steps and --batch-size may shorten it; the rest is the config's,
set with cmd/export -set), then the config's fine-tune, if any. A trained export is fine-tuned: --finetune-len and --finetune-steps at
--finetune-lr (default train.min_lr, held constant, as cmd/train's train.finetune), with the
scaling --scaling and --factor name or, without them, the export's. The windows come from the
training part of the corpus (data.path, gosrc, or --corpus FILE), cut as cmd/train cuts it.

The model trains as cmd/train trains it (AdamW, the schedule, weight decay, learning-rate
multiples and floors by weight, gradient clipping), not on the same draws. It is saved with
config.json's train section, name and scaling rewritten to say what was trained and a record
"trained" of the phases, so that cmd/import makes the checkpoint of that training. float32
by default (--dtype float64 on request: cmd/import rounds it to float32), on CUDA when there
is one (--device), progress on stderr. Bad input is one line on stderr and exit status 2.
"""
import copy
import os
import re
import sys
import time

import blas
import cli

if __name__ == "__main__":
    blas.set_threads(sys.argv[1:])  # before torch is imported

import torch  # noqa: E402

import extrapolate  # noqa: E402
from extrapolate import export, training  # noqa: E402
from extrapolate.data import split  # noqa: E402
from extrapolate.rope import SCALINGS, scaling_name  # noqa: E402

PROGRAM = "pytorch/train.py"


def parse_args(argv):
    p = cli.Parser(description=__doc__.split("\n\n")[0])
    p.add_argument("folder", help="a folder cmd/export wrote (config.json and model.safetensors)")
    p.add_argument("--out", required=True, help="the folder to write the trained model's config.json and model.safetensors into")
    p.add_argument("--overwrite", action="store_true", help="replace an export in --out")
    p.add_argument("--name", help="the model's name in config.json, which cmd/import gives the checkpoint (default: the export's)")
    p.add_argument("--steps", help="an untrained export: the main phase's steps (default: train.steps)")
    p.add_argument("--batch-size", help="an untrained export: windows a step (default: train.batch_size)")
    p.add_argument("--finetune-len", help="fine-tune at this length (default: train.finetune.seq_len, for an untrained export)")
    p.add_argument("--finetune-steps", help="fine-tuning steps (default: train.finetune.steps, for an untrained export)")
    p.add_argument("--finetune-lr", help="fine-tuning's constant learning rate (default: train.finetune.lr, or train.min_lr)")
    p.add_argument("--scaling", help="the RoPE scaling in force while fine-tuning, at its defaults: none, " + ", ".join(SCALINGS)
                   + " (default: the export's)")
    p.add_argument("--factor", default="auto", help="the scaling's factor: auto (n/L) or a number ≥ 1")
    p.add_argument("--corpus", help="a text file to train on, its first nine tenths as cmd/train cuts a text corpus "
                   "(default: the export's corpus)")
    p.add_argument("--goroot", help="the Go root whose sources the gosrc corpus reads (default: go env GOROOT)")
    p.add_argument("--seed", default="1", help="the seed of the windows drawn (default 1)")
    p.add_argument("--dtype", default="float32", choices=["float32", "float64"])
    p.add_argument("--device", default="auto", choices=["auto", "cpu", "cuda"], help="auto: CUDA when there is one")
    p.add_argument("--threads", default="1", help="torch's own threads (default 1)")
    p.add_argument("--blas-threads", default=str(blas.cores()), help="OpenBLAS's threads, for the matrix products (default: the cores)")
    p.add_argument("--log-every", default="10", help="steps between progress lines (default 10)")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    a = p.parse_args(argv)
    for flag, kind, least in (("steps", int, 1), ("batch_size", int, 1), ("finetune_len", int, 2),
                              ("finetune_steps", int, 1), ("finetune_lr", float, 0), ("seed", int, 0), ("threads", int, 1),
                              ("blas_threads", int, 1), ("log_every", int, 1)):
        v = getattr(a, flag)
        if v is not None:
            setattr(a, flag, cli.number("--" + flag.replace("_", "-"), kind, least)(v))
    if a.finetune_lr == 0:
        raise ValueError("--finetune-lr 0: want a positive number")
    a.factor = cli.factor(a.factor)
    if a.name is not None and not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}", a.name):
        raise ValueError(f"--name {a.name!r}: want letters, digits, '.', '_' or '-', the first a letter or digit (a run's name)")
    if a.scaling is not None and a.scaling != "none" and a.scaling not in SCALINGS:
        raise ValueError(f"--scaling {a.scaling}: known: none, {', '.join(SCALINGS)}")
    return a


def untrained(config):
    """Whether the export is a config's untrained model (cmd/export -config): saved at step 0."""
    return config.get("partial", "").startswith("train step 0 of ")


def scaling_of(a, config):
    """The scaling the fine-tune runs with: --scaling's, with its defaults filled in as cmd/export
    fills them, or the export's."""
    if a.scaling is None:
        return config["position"]["scaling"]
    if a.scaling == "none":
        return None
    return {"type": a.scaling, "factor": a.factor, "params": dict(SCALINGS[a.scaling].defaults)}


def plan(a, config):
    """The phases to train and the train section that records them, from the export's and the
    flags; refuses what cmd/import could not record or cmd/train would not train."""
    if not isinstance(config.get("train"), dict):
        raise ValueError("config.json: train: missing; export the checkpoint again with this version of cmd/export")
    t = copy.deepcopy(config["train"])
    for key in ("passkey", "drope", "positions"):
        if t.get(key) is not None:
            raise ValueError(f"train.{key}: this trainer does not train it; train the config with cmd/train")
    phases = []
    if untrained(config):
        t["steps"], t["batch_size"] = a.steps or t["steps"], a.batch_size or t["batch_size"]
        t["warmup"] = min(t["warmup"], t["steps"])  # cmd/train refuses a warmup past the steps
        phases.append(training.Phase("train", t["seq_len"], t["batch_size"], t["steps"], t["lr"], t["min_lr"], t["warmup"]))
    elif config.get("partial"):
        raise ValueError(f"{a.folder}: saved at {config['partial']}, before training finished; finish it with cmd/train")
    elif t.get("finetune"):
        raise ValueError(f"train.finetune: {a.folder} was fine-tuned already, at {t['finetune']['seq_len']}; "
                         "its config cannot record a second fine-tune")
    f = dict(t.get("finetune") or {})
    if a.finetune_len or a.finetune_steps or a.finetune_lr:
        f.update({k: v for k, v in (("seq_len", a.finetune_len), ("steps", a.finetune_steps), ("lr", a.finetune_lr)) if v})
    if f:
        for key in ("seq_len", "steps"):
            if not f.get(key):
                raise ValueError(f"--finetune-{'len' if key == 'seq_len' else key}: missing; a fine-tune needs its length and steps")
        if f["seq_len"] <= t["seq_len"]:
            raise ValueError(f"--finetune-len {f['seq_len']}: want a length above train.seq_len {t['seq_len']}")
        f["lr"] = f.get("lr") or t["min_lr"]
        t["finetune"] = f
        batch = max(1, t["batch_size"] * t["seq_len"] // f["seq_len"])  # the same tokens a step
        phases.append(training.Phase("finetune", f["seq_len"], batch, f["steps"], f["lr"], f["lr"], 0, scaling_of(a, config)))
    if not phases:
        raise ValueError(f"{a.folder} is trained: give --finetune-len and --finetune-steps to fine-tune it")
    if a.scaling is not None and not f:
        raise ValueError(f"--scaling {a.scaling}: the scaling of a fine-tune, and there is none to run")
    return phases, t


def record(a, config, phases, section, device, corpus, results):
    """config.json of the trained model: the train section, name and scaling of what was
    trained, no partial, and a record of each phase appended to the export's own."""
    out = copy.deepcopy(config)
    out.pop("partial", None)
    out["name"] = a.name or config["name"]
    out["train"] = section
    fine = [p for p in phases if p.name == "finetune"]
    if fine and a.scaling is not None:
        out["position"]["scaling"] = fine[0].scaling
        sc = fine[0].scaling
        if isinstance(out["position"].get("config"), dict):  # the section as a config gives it
            out["position"]["config"]["scaling"] = None if sc is None else {"type": sc["type"], "factor": sc["factor"], **sc["params"]}
    out["trained"] = list(config.get("trained", [])) + [{
        "program": PROGRAM, "torch": torch.__version__, "device": str(device), "dtype": a.dtype, "corpus": corpus,
        "from": {"name": config["name"], "weights_sha256": config["weights_sha256"]},
        "phases": [{"name": p.name, "seq_len": p.seq_len, "batch": p.batch, "steps": p.steps, "lr": p.lr, "min_lr": p.min_lr,
                    "warmup": p.warmup, "scaling": scaling_name(p.scaling), "loss": loss, "seconds": round(sec, 1)}
                   for p, (loss, sec) in zip(phases, results)]}]
    return out


def main(argv=None):
    a = parse_args(argv)
    torch.set_num_threads(a.threads)
    export.check_out(a.out, a.overwrite)
    model = extrapolate.load(a.folder)
    config = model.config
    phases, section = plan(a, config)
    device = torch.device("cuda" if a.device == "cuda" or (a.device == "auto" and torch.cuda.is_available()) else "cpu")
    model = model.to(device=device, dtype=getattr(torch, a.dtype))
    for p in phases:  # a length or scaling the scheme refuses, before any step
        try:
            model.positions(p.seq_len, p.scaling)
        except extrapolate.NotApplicable as e:
            raise ValueError(f"{p.name} at {p.seq_len}: {e}") from e
    corpus = a.corpus or config["data"].get("path") or "gosrc"
    text, _ = split(config, a.corpus, a.goroot)
    windows = training.Windows(text, a.seed, device)
    progress = None if a.quiet else lambda line: print(f"train.py: {line}", file=sys.stderr, flush=True)
    opt = training.optimizer(model, section)
    results = []
    for p in phases:
        if progress:
            progress(f"{config['name']}: {p.name}, {p.steps} steps of {p.batch} windows of {p.seq_len}, "
                     f"{scaling_name(p.scaling)}, {a.dtype} on {device}")
        results.append(training.run(model, p, opt, windows, section["grad_clip"], progress, a.log_every))
    model.config = record(a, config, phases, section, device, corpus, results)
    start = time.monotonic()
    extrapolate.save(model, a.out, PROGRAM)
    if progress:
        progress(f"saved {os.path.join(a.out, export.WEIGHTS)} and {export.CONFIG} in {time.monotonic() - start:.1f} s; "
                 f"trained in {sum(s for _, s in results):.0f} s")


if __name__ == "__main__":
    cli.run("train.py", main, training.Diverged)
