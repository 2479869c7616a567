"""Exact counting over layer lists: output shape, parameters, forward FLOPs and stored activations.

A layer is `{"kind": K, "args": A}` (see docs/CANDIDATE.md). Shapes exclude the batch dimension.
FLOPs follow torch.utils.flop_counter: one multiply-add = 2 FLOPs, counted for matrix products and
convolutions only (bias adds, activations, normalisation and pooling are not counted, as there).
`activations` is the number of values a training step keeps for the backward pass per example: each
layer's output (recurrent layers also keep their gates), which the memory estimate multiplies by the batch.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

Layer = dict[str, Any]
Shape = tuple[int, ...]


@dataclass(frozen=True)
class Counts:
    shape: Shape
    parameters: int
    flops: int
    activations: int


def layer(kind: str, **args: Any) -> Layer:
    return {"kind": kind, "args": args}


def count(layers: Sequence[Layer], shape: Sequence[int]) -> Counts:
    """Counts for a layer list applied to one example of `shape`; ValueError if a layer does not fit."""
    current: Shape = tuple(shape)
    parameters = flops = activations = 0
    for item in layers:
        rule = _KINDS.get(item["kind"])
        if rule is None:
            raise ValueError(f"unknown layer kind {item['kind']!r}")
        current, p, f, a = rule(item["args"], current)
        parameters += p
        flops += f
        activations += a
    return Counts(current, parameters, flops, activations)


def _pair(value: Any) -> tuple[int, int]:
    if isinstance(value, int):
        return value, value
    return int(value[0]), int(value[1])


_Result = tuple[Shape, int, int, int]


def _linear(a: dict[str, Any], s: Shape) -> _Result:
    if not s or s[-1] != a["in_features"]:
        raise ValueError(f"Linear expects last dim {a['in_features']}, got {s}")
    out = (*s[:-1], a["out_features"])
    positions = math.prod(s[:-1])
    params = a["in_features"] * a["out_features"] + (a["out_features"] if a.get("bias", True) else 0)
    return out, params, 2 * positions * a["in_features"] * a["out_features"], math.prod(out)


def _elementwise(_a: dict[str, Any], s: Shape) -> _Result:
    return s, 0, 0, math.prod(s)


def _flatten(a: dict[str, Any], s: Shape) -> _Result:
    if a.get("start_dim", 1) != 1 or a.get("end_dim", -1) != -1:
        raise ValueError("only Flatten() with default dims is supported")
    return (math.prod(s),), 0, 0, 0


def _reshape(a: dict[str, Any], s: Shape) -> _Result:
    target = tuple(a["shape"])
    if math.prod(target) != math.prod(s):
        raise ValueError(f"Reshape {s} -> {target} changes the number of values")
    return target, 0, 0, 0


def _conv_out(size: int, k: int, stride: int, pad: int, dilation: int = 1, ceil: bool = False) -> int:
    span = size + 2 * pad - dilation * (k - 1) - 1
    out = (-(-span // stride) if ceil else span // stride) + 1
    if ceil and (out - 1) * stride >= size + pad:
        out -= 1  # torch drops a last window that would start in the right padding
    if out < 1:
        raise ValueError(f"window {k} does not fit size {size}")
    return out


def _conv2d(a: dict[str, Any], s: Shape) -> _Result:
    c, h, w = s
    if c != a["in_channels"]:
        raise ValueError(f"Conv2d expects {a['in_channels']} channels, got {c}")
    (kh, kw), (sh, sw) = _pair(a["kernel_size"]), _pair(a.get("stride", 1))
    (ph, pw), (dh, dw) = _pair(a.get("padding", 0)), _pair(a.get("dilation", 1))
    groups, cout = a.get("groups", 1), a["out_channels"]
    ho, wo = _conv_out(h, kh, sh, ph, dh), _conv_out(w, kw, sw, pw, dw)
    per_out = (c // groups) * kh * kw
    params = cout * per_out + (cout if a.get("bias", True) else 0)
    return (cout, ho, wo), params, 2 * cout * ho * wo * per_out, cout * ho * wo


def _conv_transpose2d(a: dict[str, Any], s: Shape) -> _Result:
    c, h, w = s
    if c != a["in_channels"]:
        raise ValueError(f"ConvTranspose2d expects {a['in_channels']} channels, got {c}")
    (kh, kw), (sh, sw) = _pair(a["kernel_size"]), _pair(a.get("stride", 1))
    (ph, pw), (oh, ow) = _pair(a.get("padding", 0)), _pair(a.get("output_padding", 0))
    groups, cout = a.get("groups", 1), a["out_channels"]
    ho, wo = (h - 1) * sh - 2 * ph + kh + oh, (w - 1) * sw - 2 * pw + kw + ow
    params = c * (cout // groups) * kh * kw + (cout if a.get("bias", True) else 0)
    # torch counts a transposed convolution over the input positions
    return (cout, ho, wo), params, 2 * h * w * c * (cout // groups) * kh * kw, cout * ho * wo


def _pool2d(a: dict[str, Any], s: Shape) -> _Result:
    c, h, w = s
    (kh, kw) = _pair(a["kernel_size"])
    (sh, sw) = _pair(a.get("stride") or a["kernel_size"])
    (ph, pw) = _pair(a.get("padding", 0))
    ceil = bool(a.get("ceil_mode", False))
    out = (c, _conv_out(h, kh, sh, ph, 1, ceil), _conv_out(w, kw, sw, pw, 1, ceil))
    return out, 0, 0, math.prod(out)


def _adaptive_pool2d(a: dict[str, Any], s: Shape) -> _Result:
    oh, ow = _pair(a["output_size"])
    return (s[0], oh, ow), 0, 0, s[0] * oh * ow


def _batch_norm(a: dict[str, Any], s: Shape) -> _Result:
    if s[0] != a["num_features"]:
        raise ValueError(f"BatchNorm expects {a['num_features']} features, got {s}")
    return s, (2 * s[0] if a.get("affine", True) else 0), 0, math.prod(s)


def _embedding(a: dict[str, Any], s: Shape) -> _Result:
    if len(s) != 1:
        raise ValueError(f"Embedding expects [steps] token ids, got {s}")
    out = (s[0], a["embedding_dim"])
    return out, a["num_embeddings"] * a["embedding_dim"], 0, math.prod(out)


def _embedding_bag(a: dict[str, Any], s: Shape) -> _Result:
    """The mean (or sum) of the sequence's embeddings: [steps] ids -> [embedding_dim]. The reduction's
    adds are not matrix products, so no FLOPs, as torch's counter has it."""
    if len(s) != 1:
        raise ValueError(f"EmbeddingBag expects [steps] token ids, got {s}")
    return (a["embedding_dim"],), a["num_embeddings"] * a["embedding_dim"], 0, a["embedding_dim"]


_GATES = {"LSTM": 4, "GRU": 3, "RNN": 1}
# values kept per step and unit for backward: gate pre-activations plus cell and hidden state
_KEPT = {"LSTM": 6, "GRU": 4, "RNN": 1}


def _recurrent(kind: str) -> Callable[[dict[str, Any], Shape], _Result]:
    def rule(a: dict[str, Any], s: Shape) -> _Result:
        if len(s) != 2 or s[1] != a["input_size"] or not a.get("batch_first"):
            raise ValueError(f"{kind} expects batch_first and [steps, {a['input_size']}], got {s}")
        steps, hidden, gates = s[0], a["hidden_size"], _GATES[kind]
        dirs = 2 if a.get("bidirectional") else 1
        params = flops = 0
        width = a["input_size"]
        for _ in range(a.get("num_layers", 1)):
            per_dir = gates * hidden * (width + hidden)
            params += dirs * (per_dir + (2 * gates * hidden if a.get("bias", True) else 0))
            flops += dirs * 2 * steps * per_dir
            width = hidden * dirs
        kept = a.get("num_layers", 1) * dirs * steps * hidden * _KEPT[kind]
        return (steps, hidden * dirs), params, flops, kept

    return rule


def _last_step(_a: dict[str, Any], s: Shape) -> _Result:
    if len(s) != 2:
        raise ValueError(f"LastStep expects [steps, features], got {s}")
    return (s[1],), 0, 0, 0


def _rbm(a: dict[str, Any], s: Shape) -> _Result:
    if s != (a["visible"],):
        raise ValueError(f"RBM expects [{a['visible']}], got {s}")
    v, h = a["visible"], a["hidden"]
    return (h,), v * h + v + h, 2 * v * h, h


def _residual(a: dict[str, Any], s: Shape) -> _Result:
    body = count(a["body"], s)
    shortcut = count(a["shortcut"], s)
    if body.shape != shortcut.shape:
        raise ValueError(f"Residual body gives {body.shape}, shortcut {shortcut.shape}")
    kept = body.activations + shortcut.activations + math.prod(body.shape)
    return body.shape, body.parameters + shortcut.parameters, body.flops + shortcut.flops, kept


def _concat(a: dict[str, Any], s: Shape) -> _Result:
    parts = [count(branch, s) for branch in a["branches"]]
    if len({p.shape[1:] for p in parts}) != 1:
        raise ValueError(f"Concat branches disagree beyond channels: {[p.shape for p in parts]}")
    out = (sum(p.shape[0] for p in parts), *parts[0].shape[1:])
    return (
        out,
        sum(p.parameters for p in parts),
        sum(p.flops for p in parts),
        sum(p.activations for p in parts) + math.prod(out),
    )


_KINDS: dict[str, Callable[[dict[str, Any], Shape], _Result]] = {
    "Linear": _linear,
    "ReLU": _elementwise,
    "LeakyReLU": _elementwise,
    "Sigmoid": _elementwise,
    "Tanh": _elementwise,
    "Dropout": _elementwise,
    "Flatten": _flatten,
    "Reshape": _reshape,
    "Conv2d": _conv2d,
    "ConvTranspose2d": _conv_transpose2d,
    "MaxPool2d": _pool2d,
    "AvgPool2d": _pool2d,
    "AdaptiveAvgPool2d": _adaptive_pool2d,
    "BatchNorm2d": _batch_norm,
    "BatchNorm1d": _batch_norm,
    "Embedding": _embedding,
    "EmbeddingBag": _embedding_bag,
    "LSTM": _recurrent("LSTM"),
    "GRU": _recurrent("GRU"),
    "RNN": _recurrent("RNN"),
    "LastStep": _last_step,
    "RBM": _rbm,
    "Residual": _residual,
    "Concat": _concat,
}
