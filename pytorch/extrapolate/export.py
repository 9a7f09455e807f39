"""An export folder, as cmd/export writes it and cmd/import reads it: config.json, naming every
setting the model is rebuilt from, and model.safetensors, the weights, tied together by the
weights' SHA-256 (docs/export.md#files)."""
import hashlib
import json
import os
import tempfile

from . import safetensors

FORMAT, VERSION = "extrapolate-export", 1
CONFIG, WEIGHTS = "config.json", "model.safetensors"

# The sections read, and the JSON type each must be.
SECTIONS = (("model", dict), ("position", dict), ("attention", dict), ("eval", dict), ("weights", list), ("weights_sha256", str))


def read_config(folder):
    """config.json of the export in folder, checked to be what cmd/export writes."""
    path = os.path.join(folder, CONFIG)
    with open(path) as f:
        try:
            config = json.load(f)
        except (UnicodeDecodeError, json.JSONDecodeError) as e:
            raise ValueError(f"{path}: not JSON: {e}") from e
    if not isinstance(config, dict):
        raise ValueError(f"{path}: a JSON {type(config).__name__}, want the object cmd/export writes")
    if config.get("format") != FORMAT or config.get("version") != VERSION:
        raise ValueError(f"{path}: format {config.get('format')} version {config.get('version')}, want {FORMAT} {VERSION}")
    for key, kind in SECTIONS:
        if not isinstance(config.get(key), kind):
            raise ValueError(f"{path}: {key}: {config.get(key)!r:.40}, want a JSON {'object' if kind is dict else kind.__name__}")
    return config


def read(folder):
    """(config, {name: tensor}) of the export in folder; the weights must be the file config.json
    was written with."""
    config = read_config(folder)
    path = os.path.join(folder, WEIGHTS)
    with open(path, "rb") as f:
        data = f.read()
    if hashlib.sha256(data).hexdigest() != config["weights_sha256"]:
        raise ValueError(f"{path} is not the file config.json was written with (SHA-256 differs)")
    weights, _ = safetensors.decode(path, data)
    return config, weights


def check_out(folder, overwrite):
    """Refuses an output folder that holds an export already, unless overwrite; said before any
    work is done, as cmd/export does."""
    if os.path.exists(folder) and not os.path.isdir(folder):
        raise ValueError(f"--out {folder}: a file, not a folder")
    for name in (WEIGHTS, CONFIG):
        path = os.path.join(folder, name)
        if os.path.lexists(path) and not overwrite:
            raise ValueError(f"--out: {path} exists; use --overwrite to replace it")


def write(folder, config, weights, program):
    """Writes weights, a list of (name, tensor) in the export's order, and config (whose
    weights, dtype and weights_sha256 are set here) to folder, each file atomically; the
    weights go first and are removed again if the config cannot be written, as cmd/export
    does, so that a failure leaves no export that is half new."""
    dtypes = {safetensors.NAMES[t.dtype] for _, t in weights}
    if len(dtypes) != 1:
        raise ValueError(f"weights of dtypes {sorted(dtypes)}, want one")
    entries = {w["name"]: w for w in config["weights"]}
    config = dict(config)
    config["dtype"] = "float64" if dtypes == {"F64"} else "float32"
    config["weights"] = [{**entries.get(name, {}), "name": name, "shape": list(t.shape)} for name, t in weights]
    meta = {"format": "pt", "program": program, "name": config["name"], "scheme": config["position"]["scheme"], "config": CONFIG}
    data = safetensors.encode(weights, meta)
    config["weights_sha256"] = hashlib.sha256(data).hexdigest()
    text = json.dumps(config, indent=2, ensure_ascii=False) + "\n"
    os.makedirs(folder, exist_ok=True)
    weights_path = os.path.join(folder, WEIGHTS)
    _atomic(weights_path, data)
    try:
        _atomic(os.path.join(folder, CONFIG), text.encode("utf-8"))
    except OSError:
        os.remove(weights_path)
        raise


def _atomic(path, data):
    """Writes data to path through a temporary file in the same folder, synced and renamed over
    it, as internal/atomicfile does: a reader sees the old file or the new, never a part."""
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path) or ".", prefix="." + os.path.basename(path) + ".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise
