"""The layer kinds' shape rules: for a kind's `args` and one example's input shape, its output shape, its
parameters, its forward FLOPs and the values it keeps for backward (advisor/engine/layers.py's `KINDS` holds
each kind's rule beside its memory rule and its cost; the rules of the kinds made of layer lists, Residual and
Concat, are there, as they count their branches).

FLOPs follow torch.utils.flop_counter: one multiply-add = 2 FLOPs, counted for matrix products and
convolutions only (bias adds, activations, normalisation and pooling are not counted, as there). The kept
values are each layer's output (recurrent layers: their gates and states). Shapes exclude the batch
dimension; a layer whose input does not fit is a ValueError.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from advisor.contract import LayerArgs

Shape = tuple[int, ...]
Result = tuple[Shape, int, int, int]  # output shape, parameters, forward FLOPs, kept values
ShapeRule = Callable[[LayerArgs, Shape], Result]


def pair(value: int | Sequence[int]) -> tuple[int, int]:
    if isinstance(value, int):
        return value, value
    return int(value[0]), int(value[1])


def scalar(value: int | Sequence[int]) -> int:
    """A size given as one number (a 1-D kernel); a list is the TypeError int() of it was."""
    if isinstance(value, Sequence):
        raise TypeError(f"expected one number, got {value!r}")
    return int(value)


# --- Linear


def linear(a: LayerArgs, s: Shape) -> Result:
    if not s or s[-1] != a["in_features"]:
        raise ValueError(f"Linear expects last dim {a['in_features']}, got {s}")
    out = (*s[:-1], a["out_features"])
    positions = math.prod(s[:-1])
    params = a["in_features"] * a["out_features"] + (a["out_features"] if a.get("bias", True) else 0)
    return out, params, 2 * positions * a["in_features"] * a["out_features"], math.prod(out)


# --- element-wise layers and views


def elementwise(_a: LayerArgs, s: Shape) -> Result:
    return s, 0, 0, math.prod(s)


def flatten(a: LayerArgs, s: Shape) -> Result:
    if a.get("start_dim", 1) != 1 or a.get("end_dim", -1) != -1:
        raise ValueError("only Flatten() with default dims is supported")
    return (math.prod(s),), 0, 0, 0


def reshape(a: LayerArgs, s: Shape) -> Result:
    target = tuple(a["shape"])
    if math.prod(target) != math.prod(s):
        raise ValueError(f"Reshape {s} -> {target} changes the number of values")
    return target, 0, 0, 0


def gaussian(a: LayerArgs, s: Shape) -> Result:
    """A Gaussian decoder's output: its input (the mean) unchanged, plus one learned log-variance per value
    (`features` parameters, no FLOPs) that the ELBO and the sampling read."""
    if len(s) != 1 or s[0] != a["features"]:
        raise ValueError(f"Gaussian({a['features']}) expects [{a['features']}], got {s}")
    return s, int(a["features"]), 0, 0


def last_step(_a: LayerArgs, s: Shape) -> Result:
    if len(s) != 2:
        raise ValueError(f"LastStep expects [steps, features], got {s}")
    return (s[1],), 0, 0, 0


def pool_over_time(a: LayerArgs, s: Shape) -> Result:
    pools = list(a.get("pools") or [])
    if len(s) != 2:
        raise ValueError(f"PoolOverTime expects [steps, features], got {s}")
    if not pools or any(p not in ("last", "max") for p in pools):
        raise ValueError(f"PoolOverTime pools: 'last' and/or 'max', got {pools}")
    out = len(pools) * s[1]
    return (out,), 0, 0, out


# --- convolutions and pooling


def _conv_out(size: int, k: int, stride: int, pad: int, dilation: int = 1, ceil: bool = False) -> int:
    span = size + 2 * pad - dilation * (k - 1) - 1
    out = (-(-span // stride) if ceil else span // stride) + 1
    if ceil and (out - 1) * stride >= size + pad:
        out -= 1  # torch drops a last window that would start in the right padding
    if out < 1:
        raise ValueError(f"window {k} does not fit size {size}")
    return out


_Pair = tuple[int, int]


def _planes(a: LayerArgs, s: Shape, kind: str) -> tuple[int, int, int, _Pair, _Pair, _Pair, int, int]:
    """A 2-D convolution's (or transposed one's) input channels (checked against `in_channels`), height and
    width, then its kernel, stride and padding pairs, groups and output channels."""
    c, h, w = s
    if c != a["in_channels"]:
        raise ValueError(f"{kind} expects {a['in_channels']} channels, got {c}")
    kernel, stride, padding = pair(a["kernel_size"]), pair(a.get("stride", 1)), pair(a.get("padding", 0))
    return c, h, w, kernel, stride, padding, a.get("groups", 1), a["out_channels"]


def conv2d(a: LayerArgs, s: Shape) -> Result:
    c, h, w, (kh, kw), (sh, sw), (ph, pw), groups, cout = _planes(a, s, "Conv2d")
    dh, dw = pair(a.get("dilation", 1))
    ho, wo = _conv_out(h, kh, sh, ph, dh), _conv_out(w, kw, sw, pw, dw)
    per_out = (c // groups) * kh * kw
    params = cout * per_out + (cout if a.get("bias", True) else 0)
    return (cout, ho, wo), params, 2 * cout * ho * wo * per_out, cout * ho * wo


def conv_transpose2d(a: LayerArgs, s: Shape) -> Result:
    c, h, w, (kh, kw), (sh, sw), (ph, pw), groups, cout = _planes(a, s, "ConvTranspose2d")
    oh, ow = pair(a.get("output_padding", 0))
    ho, wo = (h - 1) * sh - 2 * ph + kh + oh, (w - 1) * sw - 2 * pw + kw + ow
    params = c * (cout // groups) * kh * kw + (cout if a.get("bias", True) else 0)
    # torch counts a transposed convolution over the input positions
    return (cout, ho, wo), params, 2 * h * w * c * (cout // groups) * kh * kw, cout * ho * wo


def causal_conv1d(a: LayerArgs, s: Shape) -> Result:
    """[steps, in_channels] -> [steps, out_channels]: each step sees itself and (kernel_size - 1) *
    dilation steps before it (left padding), so the length is kept; FLOPs over the output's steps, as
    torch's counter counts the convolution it runs."""
    if len(s) != 2 or s[1] != a["in_channels"]:
        raise ValueError(f"CausalConv1d expects [steps, {a['in_channels']}], got {s}")
    steps, c, k, cout = s[0], s[1], scalar(a["kernel_size"]), a["out_channels"]
    params = cout * c * k + (cout if a.get("bias", True) else 0)
    return (steps, cout), params, 2 * cout * steps * c * k, steps * cout


def pool2d(a: LayerArgs, s: Shape) -> Result:
    c, h, w = s
    (kh, kw) = pair(a["kernel_size"])
    (sh, sw) = pair(a.get("stride") or a["kernel_size"])
    (ph, pw) = pair(a.get("padding", 0))
    ceil = bool(a.get("ceil_mode", False))
    out = (c, _conv_out(h, kh, sh, ph, 1, ceil), _conv_out(w, kw, sw, pw, 1, ceil))
    return out, 0, 0, math.prod(out)


def adaptive_pool2d(a: LayerArgs, s: Shape) -> Result:
    oh, ow = pair(a["output_size"])
    return (s[0], oh, ow), 0, 0, s[0] * oh * ow


def batch_norm(a: LayerArgs, s: Shape) -> Result:
    if s[0] != a["num_features"]:
        raise ValueError(f"BatchNorm expects {a['num_features']} features, got {s}")
    return s, (2 * s[0] if a.get("affine", True) else 0), 0, math.prod(s)


# --- embeddings


def embedding(a: LayerArgs, s: Shape) -> Result:
    if len(s) != 1:
        raise ValueError(f"Embedding expects [steps] token ids, got {s}")
    out = (s[0], a["embedding_dim"])
    return out, a["num_embeddings"] * a["embedding_dim"], 0, math.prod(out)


def embedding_bag(a: LayerArgs, s: Shape) -> Result:
    """The mean (or sum) of the sequence's embeddings: [steps] ids -> [embedding_dim]. The reduction's
    adds are not matrix products, so no FLOPs, as torch's counter has it."""
    if len(s) != 1:
        raise ValueError(f"EmbeddingBag expects [steps] token ids, got {s}")
    return (a["embedding_dim"],), a["num_embeddings"] * a["embedding_dim"], 0, a["embedding_dim"]


# --- recurrent layers

GATES = {"LSTM": 4, "GRU": 3, "RNN": 1}
# values kept per step and unit for backward, as autograd saves them on PyTorch's reference path (counted
# with saved_tensors_hooks, tests/engine/test_memory.py): the GRU's gates, their products and the new state
# (7), the RNN's state (1); the LSTM's four gates with its cell and hidden state (6). On the CPU the GRU and
# RNN run that path; the LSTM runs oneDNN's fused kernel, whose workspace keeps more (layers._lstm_kept).
KEPT = {"LSTM": 6, "GRU": 7, "RNN": 1}


def recurrent(kind: str) -> ShapeRule:
    def rule(a: LayerArgs, s: Shape) -> Result:
        if len(s) != 2 or s[1] != a["input_size"] or not a.get("batch_first"):
            raise ValueError(f"{kind} expects batch_first and [steps, {a['input_size']}], got {s}")
        steps, hidden, gates = s[0], a["hidden_size"], GATES[kind]
        dirs = 2 if a.get("bidirectional") else 1
        params = flops = 0
        width = a["input_size"]
        for _ in range(a.get("num_layers", 1)):
            per_dir = gates * hidden * (width + hidden)
            params += dirs * (per_dir + (2 * gates * hidden if a.get("bias", True) else 0))
            flops += dirs * 2 * steps * per_dir
            width = hidden * dirs
        kept = a.get("num_layers", 1) * dirs * steps * hidden * KEPT[kind]
        return (steps, hidden * dirs), params, flops, kept

    return rule


# --- the advisor's own kinds


def rbm(a: LayerArgs, s: Shape) -> Result:
    if s != (a["visible"],):
        raise ValueError(f"RBM expects [{a['visible']}], got {s}")
    v, h = a["visible"], a["hidden"]
    return (h,), v * h + v + h, 2 * v * h, h
