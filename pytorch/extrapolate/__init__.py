"""The models of extrapolate in PyTorch: an export of cmd/export rebuilt as a torch.nn.Module,
scored as cmd/eval scores it, trained or fine-tuned, and saved in the export's layout, which
cmd/import reads back into a checkpoint (docs/export.md).

    import extrapolate
    model = extrapolate.load("results/rope_ntk_export", torch.float32)
    logits = model(ids)                        # ids: (batch, n) bytes as a LongTensor
    model(ids, scaling={"type": "yarn", "factor": 4, "params": {}})
    extrapolate.save(model, "results/mine")    # config.json and model.safetensors

Every scheme, RoPE scaling and attention temperature is a Module (rope.py, biases.py,
tables.py, content.py, temperature.py), registered by name: registry.scheme is how a scheme of
your own is added, as position.Register is in Go."""
import os

from . import biases, content, export, rope, tables  # noqa: F401 (each registers its schemes)
from .biases import distances  # noqa: F401
from .model import Model
from .registry import SCHEMES, NotApplicable, scheme  # noqa: F401
from .rope import SCALINGS, Rotation  # noqa: F401


def load(folder, dtype=None):
    """The model exported to folder, its config.json checked against model.safetensors, in
    dtype (default: the export's)."""
    config, weights = export.read(folder)
    try:
        model = Model(config, weights)
    except ValueError as e:
        raise ValueError(f"{folder}: {e}") from e
    return model if dtype is None else model.to(dtype)


def save(model, folder, program="pytorch"):
    """Writes model to folder in the export's layout, its weights in their own dtype, so that
    cmd/import reads it back; model.config is the config.json written, with its weights,
    dtype and checksum made to match."""
    export.write(folder, model.config, model.named_weights(), program)
    return os.path.join(folder, export.CONFIG)
