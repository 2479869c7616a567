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
from dataclasses import dataclass, field
from typing import Any

from advisor.contract import Layer, LayerArgs
from advisor.engine.families import family_of
from advisor.engine.families.roles import (
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

Shape = tuple[int, ...]


@dataclass(frozen=True)
class Kind:
    prefix: str  # its layers' names: conv1, conv2, ...
    positional: tuple[str, ...] = ()  # arguments written by position, in this order
    piece: str | None = None  # the class model.py writes out for it; None: torch.nn's own
    wrap: str | None = None  # a piece class around the torch.nn layer
    # a container's layer lists by name, and its other arguments (Concat's dim)
    parts: Callable[[LayerArgs], dict[str, list[Layer] | int]] | None = None
    title: str = ""  # a container's, for its function's docstring


@dataclass
class Writing:
    """What writing one model.py collects: the piece classes it uses, and a function per container."""

    role: str
    used: set[str] = field(default_factory=set)
    helpers: list[str] = field(default_factory=list)
    names: set[str] = field(default_factory=set)

    def helper(self, name: str, kind: Kind, layer: Layer, shape: Shape, out: Shape | None) -> Call:
        """A container (a ResNet block, an inception block) as a function of its own, each of its layer
        lists a named `seq`, so that its layers read at the indentation of the network's own."""
        assert kind.parts is not None and kind.piece is not None
        func = f"{self.role}_{name}"
        while func in self.names:  # a block nested in another of the same name
            func += "_"
        self.names.add(func)
        parts = kind.parts(layer.get("args") or {})
        lines = [f"def {func}() -> {kind.piece}:"]
        where = shape_text(shape) + ("" if out is None else f" -> {shape_text(out)}")
        lines.append(source.docstring(f"{kind.title}: {where}.", source.INDENT))
        for var, layers in parts.items():
            if isinstance(layers, list):
                lines += sequence(layers, shape, self).lines(source.INDENT, lead=f"{var} = ")
        given = [var if isinstance(v, list) else f"{var}={literal(v)}" for var, v in parts.items()]
        lines.append(f"{source.INDENT}return {kind.piece}({', '.join(given)})")
        self.helpers.append("\n".join(lines))
        return Call(func, [])


def _residual(args: LayerArgs) -> dict[str, list[Layer] | int]:
    """body, and the shortcut where it is not the identity (no layers)."""
    shortcut = args.get("shortcut") or []
    return {"body": list(args["body"]), **({"shortcut": list(shortcut)} if shortcut else {})}


def _concat(args: LayerArgs) -> dict[str, list[Layer] | int]:
    branches: dict[str, list[Layer] | int] = {
        f"branch{i}": list(b) for i, b in enumerate(args["branches"], 1)
    }
    return branches | ({"dim": int(args["dim"])} if int(args.get("dim", 1)) != 1 else {})


RECURRENT = ("input_size", "hidden_size")
CHANNELS = ("in_channels", "out_channels")
KINDS: dict[str, Kind] = {
    "Linear": Kind("fc", ("in_features", "out_features")),
    "Conv1d": Kind("conv", CHANNELS),
    "CausalConv1d": Kind("tconv", (*CHANNELS, "kernel_size"), piece="CausalConv1d"),
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
    "PoolOverTime": Kind("readout", ("pools",), piece="PoolOverTime"),
    "Gaussian": Kind("gaussian", ("features",), piece="Gaussian"),
    "RBM": Kind("rbm", ("visible", "hidden"), piece="RBM"),
    "Residual": Kind("block", piece="Residual", parts=_residual, title="A residual block"),
    "Concat": Kind(
        "inception", piece="Concat", parts=_concat, title="An inception block, its branches joined"
    ),
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


def layer_call(layer: Layer, kind: Kind) -> Call:
    """One layer's constructor."""
    args = dict(layer.get("args") or {})
    written: list[str | Call] = []
    for name in kind.positional:
        if name not in args:
            break
        written.append(literal(args.pop(name)))
    written += [f"{k}={literal(v)}" for k, v in args.items()]
    call = Call(kind.piece or f"nn.{layer['kind']}", written)
    return call if kind.wrap is None else Call(kind.wrap, [call])


def shape_text(shape: Sequence[int]) -> str:
    return "[" + ", ".join(str(s) for s in shape) + "]"


def sequence(layers: Sequence[Layer], shape: Shape, writing: Writing) -> Call:
    """`seq((name, layer), ...)`: the layers named by kind and count, each with the shape it gives."""
    writing.used.add("seq")
    numbers: dict[str, int] = {}
    entries: list[str | Call] = []
    comments: list[str] = []
    current: Shape | None = shape
    for layer in layers:
        kind = kind_of(str(layer["kind"]))
        writing.used |= {k for k in (kind.piece, kind.wrap) if k is not None}
        numbers[kind.prefix] = numbers.get(kind.prefix, 0) + 1
        name = f"{kind.prefix}{numbers[kind.prefix]}"
        after = _after(layer, current)
        if kind.parts is not None:
            call = writing.helper(name, kind, layer, current or (), after)
        else:
            call = layer_call(layer, kind)
        entries.append(Call("", [literal(name), call]))
        current = after
        comments.append("" if current is None else shape_text(current))
    return Call("seq", entries, comments)


def _after(layer: Layer, shape: Shape | None) -> Shape | None:
    """The shape a layer gives, where the engine counts its kind."""
    return None if shape is None else _through([layer], shape)


def _through(layers: Sequence[Layer], shape: Shape) -> Shape | None:
    try:
        return count(layers, shape).shape
    except (ValueError, KeyError):
        return None


def model_file(candidate: Mapping[str, Any], title: str) -> str:
    """model.py: a builder per network, BUILDERS by role and build()."""
    used: set[str] = set()
    builders = []
    for role, layers in candidate["networks"].items():
        writing = Writing(role)
        shape = network_input(candidate, role)
        body = sequence(layers, shape, writing)
        out = _through(layers, shape)
        doc = f"{ROLES.get(role, role)}: {shape_text(shape)}" + (
            "" if out is None else f" -> {shape_text(out)}"
        )
        lines = [
            f"def build_{role}() -> nn.Sequential:",
            source.docstring(doc + ".", source.INDENT),
            *body.lines(source.INDENT, lead="return "),
        ]
        builders += [*writing.helpers, "\n".join(lines)]
        used |= writing.used
    roles = ", ".join(f'"{role}": build_{role}' for role in candidate["networks"])
    imports, pieces = source.assemble(("layers", name) for name in sorted(used))
    parameters = int(candidate["parameters"])
    family = family_of(candidate)
    published = f" ({candidate['published']})" if candidate.get("published") else ""
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
        f"{title}: the {family.title}{published} as torch.nn code, {parameters:,} parameters in all."
        "\n\nbuild() returns each network by its role; `python model.py` counts their parameters. The "
        "shape each layer gives is written beside it (per example, without the batch dimension)."
        + (f"\n\nWhy these networks:{reasons}" if reasons else "")
    )
    sections = [d.text for d in pieces] + builders + [tail]
    return source.module(head, source.import_block(imports), sections)
