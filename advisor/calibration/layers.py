"""Build torch modules from a candidate's layer lists (the format of docs/CANDIDATE.md).

A layer is `{"kind": K, "args": A}`; K names a `torch.nn` class built as `getattr(torch.nn, K)(**A)`, except
the few kinds the advisor adds (`RBM`, `Reshape`, `LastStep`, `PoolOverTime`, `CausalConv1d`, `Gaussian`, and
container kinds the engine may add), which live in CUSTOM_KINDS below.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from torch import nn

from advisor.contract import Layer

# The advisor's own layer kinds and its initialisation are pieces a code download copies (advisor/export/):
# one definition each, so that a downloaded model.py builds what the calibration and the probe build.
from advisor.export.pieces.layers import (
    RBM,
    CausalConv1d,
    Concat,
    Gaussian,
    LastStep,
    PoolOverTime,
    Reshape,
    Residual,
    SequenceOutput,
)
from advisor.export.pieces.setup import init_small

__all__ = [
    "CUSTOM_KINDS",
    "RBM",
    "CausalConv1d",
    "Concat",
    "Gaussian",
    "LastStep",
    "PoolOverTime",
    "Reshape",
    "Residual",
    "SequenceOutput",
    "UnknownLayerError",
    "build",
    "build_layer",
    "build_layers",
    "init_small",
]

RECURRENT_KINDS = frozenset({"LSTM", "RNN", "GRU"})


def _build_residual(args: Mapping[str, Any]) -> nn.Module:
    body = build_layers(args.get("body") or args.get("layers") or [])
    shortcut_layers = args.get("shortcut")
    shortcut = build_layers(shortcut_layers) if shortcut_layers else None
    return Residual(body, shortcut)


def _build_concat(args: Mapping[str, Any]) -> nn.Module:
    return Concat(*(build_layers(branch) for branch in args["branches"]), dim=int(args.get("dim", 1)))


CUSTOM_KINDS: dict[str, Callable[[Mapping[str, Any]], nn.Module]] = {
    "RBM": lambda a: RBM(int(a["visible"]), int(a["hidden"])),
    "Reshape": lambda a: Reshape(a["shape"]),
    "LastStep": lambda a: LastStep(),
    "PoolOverTime": lambda a: PoolOverTime(a["pools"]),
    "Gaussian": lambda a: Gaussian(int(a["features"])),
    "CausalConv1d": lambda a: CausalConv1d(**a),
    "Residual": _build_residual,
    "Concat": _build_concat,
}


class UnknownLayerError(ValueError):
    """A layer kind that is neither a torch.nn class nor one of the advisor's own kinds."""


def build_layer(layer: Layer) -> nn.Module:
    kind = str(layer["kind"])
    args = dict(layer.get("args") or {})
    if kind in CUSTOM_KINDS:
        return CUSTOM_KINDS[kind](args)
    cls = getattr(nn, kind, None)
    if not (isinstance(cls, type) and issubclass(cls, nn.Module)):
        raise UnknownLayerError(
            f"unknown layer kind {kind!r}: not a torch.nn class nor one of {sorted(CUSTOM_KINDS)}"
        )
    module: nn.Module = cls(**args)
    if kind in RECURRENT_KINDS:
        return SequenceOutput(module)
    return module


def build_layers(layers: Sequence[Layer]) -> nn.Sequential:
    return nn.Sequential(*(build_layer(layer) for layer in layers))


def build(candidate: Mapping[str, Any]) -> dict[str, nn.Module]:
    """One module per network key of the candidate (`model`; `generator`/`discriminator`; `encoder`/`decoder`;
    `rbm`/`classifier`). Weights are drawn uniform ±training.init_scale when the engine gives a scale.
    """
    training = candidate.get("training") or {}
    scale = training.get("init_scale")
    fan_in_cap = training.get("init") == "uniform_fan_in"
    nets: dict[str, nn.Module] = {}
    for key, layers in candidate["networks"].items():
        net = build_layers(layers)
        if scale:
            # rule init.small (W §III-A): weights uniform in ±scale; with training.init "uniform_fan_in" no
            # wider than LeCun et al.'s 1/sqrt(fan-in) (Efficient BackProp 1998, §4.6), which keeps a wide
            # layer's output variance from growing with its width; biases zero, a norm layer's scale one
            init_small(net, float(scale), fan_in_cap)
        nets[key] = net
    return nets
