"""The schemes' registry: a position scheme's name in config.json → the torch.nn.Module that
rebuilds it, as position.Register does in Go."""
import torch.nn as nn

SCHEMES = {}  # a scheme's name in config.json → its Module class


class NotApplicable(Exception):
    """A length the scheme cannot handle by design (learned positions past their table)."""


class Scheme(nn.Module):
    """A position scheme, built from config.json's settings and the export's weights that are
    the scheme's own (by their names in the export, without a mix's hL. prefix), which it holds
    as its parameters. forward(layer, n, scaling) gives what the scheme adds at n positions in
    a layer (layer indexes the weights stacked by layer; 0 in a mix's slot), any of: "table"
    (n, d_model), "rotation" (a Rotation), "bias" (heads or 1, n, n), "forget" ((W, b) of
    FoX's gates), "stick" (stick-breaking's attend_current), "cope" (the position embeddings).
    A rotating scheme (rotating = True) takes a RoPE scaling; the others get None."""
    rotating = False

    def __init__(self, settings, weights):
        super().__init__()
        self.settings = settings
        # By the export's names, which may hold dots a Module's attribute cannot: the keys of
        # the ParameterDict are the names with "/" for ".", and w reads them back.
        self.own = nn.ParameterDict({k.replace(".", "/"): nn.Parameter(v) for k, v in weights.items()})

    @property
    def w(self):
        """The scheme's weights by their names in the export."""
        return {k.replace("/", "."): v for k, v in self.own.items()}

    def forward(self, layer, n, scaling):
        return {}


class FunctionScheme(Scheme):
    """A scheme given as a function (settings, weights, layer, n, scaling) → pieces, as a
    --plugin file registers one (docs/export.md#a-scheme-of-your-own)."""

    def __init__(self, settings, weights, fn, rotating):
        super().__init__(settings, weights)
        self.fn, self.rotating = fn, rotating

    def forward(self, layer, n, scaling):
        return self.fn(self.settings, self.w, layer, n, scaling)


def scheme(name, rotating=False):
    """Registers the decorated Scheme class, or function, as the rebuild of the scheme cmd/export
    names `name`. A function takes (settings, weights, layer, n, scaling) and returns the pieces
    Scheme.forward returns; rotating says that a RoPE scaling changes it. A scheme of your own
    goes in a file of your own given with --plugin."""
    def add(f):
        if name in SCHEMES:
            raise ValueError(f"position scheme {name!r} registered twice")
        if isinstance(f, type) and issubclass(f, Scheme):
            SCHEMES[name] = f
        else:
            SCHEMES[name] = lambda settings, weights: FunctionScheme(settings, weights, f, rotating)
        return f
    return add


def build(name, settings, weights):
    """The Module of the scheme name, or a one-line error naming it."""
    make = SCHEMES.get(name)
    if make is None:
        raise ValueError(f"position scheme {name!r}: this code knows {', '.join(sorted(SCHEMES))}; "
                         f"add its function with @scheme({name!r}) in a file given with --plugin (docs/export.md)")
    return make(settings, weights)
