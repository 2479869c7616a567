"""model.py of a download: the candidate's networks written out as torch.nn code, layer by named layer,
each with the shape it gives.

`KINDS` is the one table of layer kinds: how model.py writes each kind the engine names (docs/CANDIDATE.md).
A torch.nn class needs no entry (its arguments are written by keyword, its layers named after it); an entry
names its layers, writes its first arguments by position, and, for a kind of the advisor's own, names the
class of advisor/export/pieces/layers.py that model.py writes out for it (`render` for a container of layer
lists). A new kind outside torch.nn needs its entry here and its class in the pieces.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from advisor.engine.families import family_of
from advisor.engine.families.family import (
    CLASSIFIER,
    DECODER,
    DISCRIMINATOR,
    ENCODER,
    GENERATOR,
    MODEL,
    STACK,
    network_input,
)
from advisor.engine.layers import count
from advisor.export import source
from advisor.export.source import Call, literal

Layer = Mapping[str, Any]
Shape = tuple[int, ...]


@dataclass(frozen=True)
class Kind:
    prefix: str  # its layers' names: conv1, conv2, ...
    positional: tuple[str, ...] = ()  # arguments written by position, in this order
    piece: str | None = None  # the class model.py writes out for it; None: torch.nn's own
    wrap: str | None = None  # a piece class around the torch.nn layer
    render: Callable[[Mapping[str, Any], Shape, set[str]], Call] | None = None  # a container's call


def _residual(args: Mapping[str, Any], shape: Shape, used: set[str]) -> Call:
    """Residual(body, shortcut): the shortcut left out where it is the identity (no layers)."""
    parts = [sequence(args["body"], shape, used)]
    if args.get("shortcut"):
        parts.append(sequence(args["shortcut"], shape, used))
    return Call("Residual", [*parts])


def _concat(args: Mapping[str, Any], shape: Shape, used: set[str]) -> Call:
    branches: list[str | Call] = [sequence(branch, shape, used) for branch in args["branches"]]
    if int(args.get("dim", 1)) != 1:
        branches.append(f"dim={int(args['dim'])}")
    return Call("Concat", branches)


RECURRENT = ("input_size", "hidden_size")
CHANNELS = ("in_channels", "out_channels")
KINDS: dict[str, Kind] = {
    "Linear": Kind("fc", ("in_features", "out_features")),
    "Conv1d": Kind("conv", CHANNELS),
    "Conv2d": Kind("conv", CHANNELS),
    "ConvTranspose2d": Kind("deconv", CHANNELS),
    "MaxPool2d": Kind("pool", ("kernel_size",)),
    "AvgPool2d": Kind("pool", ("kernel_size",)),
    "AdaptiveAvgPool2d": Kind("pool", ("output_size",)),
    "BatchNorm1d": Kind("norm", ("num_features",)),
    "BatchNorm2d": Kind("norm", ("num_features",)),
    "ReLU": Kind("relu"),
    "LeakyReLU": Kind("relu", ("negative_slope",)),
    "Sigmoid": Kind("sigmoid"),
    "Tanh": Kind("tanh"),
    "Dropout": Kind("dropout", ("p",)),
    "Flatten": Kind("flatten"),
    "Embedding": Kind("embedding", ("num_embeddings", "embedding_dim")),
    "EmbeddingBag": Kind("embedding", ("num_embeddings", "embedding_dim")),
    "LSTM": Kind("lstm", RECURRENT, wrap="SequenceOutput"),
    "GRU": Kind("gru", RECURRENT, wrap="SequenceOutput"),
    "RNN": Kind("rnn", RECURRENT, wrap="SequenceOutput"),
    "Reshape": Kind("reshape", ("shape",), piece="Reshape"),
    "LastStep": Kind("last", piece="LastStep"),
    "RBM": Kind("rbm", ("visible", "hidden"), piece="RBM"),
    "Residual": Kind("block", piece="Residual", render=_residual),
    "Concat": Kind("inception", piece="Concat", render=_concat),
}

ROLES = {
    MODEL: "The network",
    GENERATOR: "The generator, from noise",
    DISCRIMINATOR: "The discriminator: a logit, real (high) or generated (low)",
    ENCODER: "The encoder: the code's mean and log-variance, side by side",
    DECODER: "The decoder, from a code",
    STACK: "The stacked RBMs, each fed the one below's hidden units",
    CLASSIFIER: "The classifier, fed the stack's last hidden units",
}


def kind_of(name: str) -> Kind:
    return KINDS.get(name) or Kind(name.lower())


def layer_call(layer: Layer, shape: Shape, used: set[str]) -> Call:
    """One layer's constructor; `used` collects the piece classes model.py must write out."""
    kind = kind_of(str(layer["kind"]))
    args = dict(layer.get("args") or {})
    if kind.piece is not None:
        used.add(kind.piece)
    if kind.render is not None:
        return kind.render(args, shape, used)
    written: list[str | Call] = []
    for name in kind.positional:
        if name not in args:
            break
        written.append(literal(args.pop(name)))
    written += [f"{k}={literal(v)}" for k, v in args.items()]
    func = kind.piece or f"nn.{layer['kind']}"
    call = Call(func, written)
    if kind.wrap is not None:
        used.add(kind.wrap)
        call = Call(kind.wrap, [call])
    return call


def shape_text(shape: Sequence[int]) -> str:
    return "[" + ", ".join(str(s) for s in shape) + "]"


def sequence(layers: Sequence[Layer], shape: Shape, used: set[str]) -> Call:
    """`seq((name, layer), ...)`: the layers named by kind and count, each with the shape it gives."""
    used.add("seq")
    numbers: dict[str, int] = {}
    entries: list[str | Call] = []
    comments: list[str] = []
    current: Shape | None = shape
    for layer in layers:
        prefix = kind_of(str(layer["kind"])).prefix
        numbers[prefix] = numbers.get(prefix, 0) + 1
        call = layer_call(layer, current or (), used)
        entries.append(Call("", [literal(f"{prefix}{numbers[prefix]}"), call]))
        current = _after(layer, current)
        comments.append("" if current is None else shape_text(current))
    return Call("seq", entries, comments)


def _after(layer: Layer, shape: Shape | None) -> Shape | None:
    """The shape a layer gives, where the engine counts its kind."""
    if shape is None:
        return None
    try:
        return count([dict(layer)], shape).shape
    except (ValueError, KeyError):
        return None


def model_file(candidate: Mapping[str, Any], title: str) -> str:
    """model.py: a builder per network, BUILDERS by role and build()."""
    used: set[str] = set()
    builders = []
    for role, layers in candidate["networks"].items():
        shape = network_input(candidate, role)
        out = count([dict(layer) for layer in layers], shape).shape
        body = sequence(layers, shape, used)
        doc = f"{ROLES.get(role, role)}: {shape_text(shape)} -> {shape_text(out)}."
        lines = [
            f"def build_{role}() -> nn.Sequential:",
            source.docstring(doc, source.INDENT),
            *body.lines(source.INDENT, lead="return "),
        ]
        builders.append("\n".join(lines))
    roles = ", ".join(f'"{role}": build_{role}' for role in candidate["networks"])
    imports, pieces = source.assemble(("layers", name) for name in sorted(used))
    parameters = int(candidate["parameters"])
    family = family_of(candidate)
    tail = f'''BUILDERS = {{{roles}}}
PARAMETERS = {parameters}  # all networks together: build() makes exactly this many


def build() -> dict[str, nn.Module]:
    """Each network by its role, with torch's default initial weights (train.py draws the
    recommended ones)."""
    return {{role: make() for role, make in BUILDERS.items()}}


if __name__ == "__main__":
    counted = 0
    for role, net in build().items():
        n = sum(p.numel() for p in net.parameters())
        counted += n
        print(f"{{role}}: {{n:,}} parameters")
    print(f"all: {{counted:,}} ({{PARAMETERS:,}} expected)")'''
    imports = [i for i in imports if i.alias != "nn"] + [source.Import("torch", "nn", "nn")]
    why = [
        r
        for r in candidate.get("reasons") or []
        if str(r.get("rule", "")).startswith(("net.", "size.")) and r.get("text")
    ]
    reasons = "".join(f"\n\n- {r['rule']}: {r['text']} [{r.get('source', '')}]" for r in why)
    head = source.docstring(
        f"{title}: the {family.title} as torch.nn code, {parameters:,} parameters in all."
        "\n\nbuild() returns each network by its role; `python model.py` counts their parameters. The "
        "shape each layer gives is written beside it (per example, without the batch dimension)."
        + (f"\n\nWhy these networks:{reasons}" if reasons else "")
    )
    sections = [d.text for d in pieces] + builders + [tail]
    return source.module(head, source.import_block(imports), sections)
