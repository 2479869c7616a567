"""The layer kinds: one table (`KINDS`) with, for each kind, its shape rule, its memory rule and how the cost
model times it.

A layer is `{"kind": K, "args": A}` (see docs/CANDIDATE.md; A is a `contract.LayerArgs`). Shapes exclude the
batch dimension.
- The shape rule gives the output shape, the parameters, the forward FLOPs and the values kept for backward
  per example (`count`). The rules are advisor/engine/layershapes.py's, but for Residual's and Concat's
  here, which count their layer lists.
- The memory rule says what PyTorch's autograd keeps alive for the layer in a training step
  (`layer_memory`, checked against PyTorch's own live-tensor figure, tests/engine/test_memory.py): a linear
  or convolution layer keeps its input, ReLU/Sigmoid/Tanh their output, LeakyReLU its input, max-pooling its
  input and int64 indices, batch-norm its input and per-channel statistics, dropout its mask (a float tensor
  on the CPU), an embedding its token ids (the batch itself), a recurrent layer every time step's gates and
  states. A tensor two layers save is one storage, counted once by the timeline (memory.py). Residual and
  Concat, made of layer lists, have none here: memory.composite_memory accounts for their branches.
- The cost is how advisor/engine/costmodel.py times it: off which profile curve, by what work.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Unpack

from advisor.contract import Layer, LayerArgs, Trainable
from advisor.engine.layershapes import (
    GATES,
    KEPT,
    Result,
    Shape,
    ShapeRule,
    adaptive_pool2d,
    batch_norm,
    causal_conv1d,
    conv2d,
    conv_transpose2d,
    elementwise,
    embedding,
    embedding_bag,
    flatten,
    gaussian,
    last_step,
    linear,
    pair,
    pool2d,
    pool_over_time,
    rbm,
    recurrent,
    reshape,
    scalar,
)

FLOAT_BYTES = 4  # training in FP32
INDEX_BYTES = 8  # int64 token ids and pooling indices

# How the cost model times a kind (layercost.layer_seconds): a matrix product, a convolution, a recurrent
# cell per time step (gated: LSTM, GRU; plain: RNN), an embedding's look-up, the values it touches, nothing.
PRODUCT = "product"
CD1_PRODUCT = "product without autograd"  # an RBM's, under CD-1
CONVOLUTION = "convolution"
POOLING = "pooling"  # a max-pool: off the profile's own curve at its input's values (version >= 11)
TEMPORAL_CONVOLUTION = "temporal convolution"  # over time steps: its own curve (engine/profile.py, conv1d)
GATED_CELL = "gated cell"
PLAIN_CELL = "plain cell"
LOOKUP = "lookup"
VALUES = "values"
VIEW = "view"
BRANCHES = "branches"  # made of layer lists: its branches, then one pass over its output


@dataclass(frozen=True)
class Counts:
    shape: Shape
    parameters: int
    flops: int
    activations: int


@dataclass(frozen=True)
class LayerMemory:
    shape: Shape  # output shape
    out_bytes: int  # per example; 0 for a view of the input (Flatten, Reshape, LastStep)
    saves_input: bool
    saves_output: bool
    saved: int  # per example: other tensors kept for backward (indices, masks, gates and states)
    saved_fixed: int  # whatever the batch: batch-norm's statistics
    tensors: tuple[int, ...]  # parameter tensors, in values (the optimiser's temporaries go per tensor)
    backward: int = 0  # per example: transient buffers of its backward pass beyond the input's gradient
    input_grad_extra: int = 0  # per example: a second buffer of the input's gradient, when it needs one
    backward_fixed: int = 0  # whatever the batch: transient buffers of its backward pass
    # Kernel temporaries PyTorch's dispatcher never sees (so outside the live peak), which the heap model
    # (heap.py) places: oneDNN's blocked copies of a convolution's input and output per example and of its
    # weights (`blocked`, timeline.py), a transposed convolution's extra output-sized buffer, and the
    # contiguous copy of the output's gradient an embedding's backward makes (`grad_copy`, per example).
    blocked: tuple[int, int, int] = (0, 0, 0)
    transposed: bool = False
    grad_copy: int = 0

    @property
    def parameters(self) -> int:
        return sum(self.tensors)


MemoryRule = Callable[[Layer, Shape, Result], LayerMemory]


@dataclass(frozen=True)
class Kind:
    shape: ShapeRule
    memory: MemoryRule | None  # None: made of layer lists (memory.composite_memory)
    cost: str
    tensors: int = 0  # parameter tensors the optimiser walks (recurrent: per layer and direction)
    touches: float = 1.0  # VALUES: passes over its values, forward + backward, against an activation's


def layer(kind: str, **args: Unpack[LayerArgs]) -> Layer:
    return {"kind": kind, "args": args}


def _kind(item: Layer) -> Kind:
    found = KINDS.get(item["kind"])
    if found is None:
        raise ValueError(f"unknown layer kind {item['kind']!r}")
    return found


def count(layers: Sequence[Layer], shape: Sequence[int]) -> Counts:
    """Counts for a layer list applied to one example of `shape`; ValueError if a layer does not fit."""
    current: Shape = tuple(shape)
    parameters = flops = activations = 0
    for item in layers:
        current, p, f, a = _kind(item).shape(item["args"], current)
        parameters += p
        flops += f
        activations += a
    return Counts(current, parameters, flops, activations)


def layer_memory(item: Layer, shape: Shape) -> LayerMemory:
    """One plain layer's account; Residual and Concat, made of layer lists, are memory.composite_memory's."""
    kind = _kind(item)
    if kind.memory is None:
        raise ValueError(f"{item['kind']} is made of layer lists: memory.composite_memory accounts for it")
    return kind.memory(item, shape, kind.shape(item["args"], shape))


def _values(shape: Shape) -> int:
    return math.prod(shape)


# --- memory rules shared by several kinds


def _plain(item: Layer, out: Result, *, saves_input: bool, saves_output: bool, saved: int = 0) -> LayerMemory:
    shape, parameters = out[0], out[1]
    args = item["args"]
    bias = int(args.get("out_channels", args.get("out_features", 0)))
    has_bias = args.get("bias", True) and parameters
    tensors = (parameters - bias, bias) if has_bias else ((parameters,) if parameters else ())
    return LayerMemory(shape, FLOAT_BYTES * _values(shape), saves_input, saves_output, saved, 0, tensors)


def _saves_output(item: Layer, _s: Shape, out: Result) -> LayerMemory:
    return _plain(item, out, saves_input=False, saves_output=True)


def _saves_input(item: Layer, _s: Shape, out: Result) -> LayerMemory:
    return _plain(item, out, saves_input=True, saves_output=False)


def _view_memory(_item: Layer, _s: Shape, out: Result) -> LayerMemory:
    return LayerMemory(out[0], 0, False, False, 0, 0, ())


# oneDNN lays a convolution's channels out in blocks of 8 floats on AVX2 (16 on AVX-512): measured on the
# AMD EPYC (AVX2) machine, a 1-channel image is copied as 8 channels
# (bench/results/memory_amd-epyc-2c_repeats/README.md)
CHANNEL_BLOCK = 8


def _block(channels: int) -> int:
    return -(-channels // CHANNEL_BLOCK) * CHANNEL_BLOCK


# --- element-wise layers


def _dropout_memory(item: Layer, s: Shape, out: Result) -> LayerMemory:
    # on the CPU dropout multiplies by a float noise tensor of the input's size and keeps it
    return _plain(item, out, saves_input=False, saves_output=False, saved=FLOAT_BYTES * _values(s))


# --- products, convolutions and pooling


def _weighted(item: Layer, s: Shape, out: Result) -> LayerMemory:
    """A product or a convolution keeps its input; a 2-D convolution runs on oneDNN's blocked copies."""
    m = _plain(item, out, saves_input=True, saves_output=False)
    if item["kind"] not in ("Conv2d", "ConvTranspose2d"):
        return m
    a = item["args"]
    kh, kw = pair(a["kernel_size"])
    blocked = (
        FLOAT_BYTES * _block(s[0]) * math.prod(s[1:]),
        FLOAT_BYTES * _block(m.shape[0]) * math.prod(m.shape[1:]),
        FLOAT_BYTES * _block(s[0]) * _block(m.shape[0]) * kh * kw // a.get("groups", 1),
    )
    return replace(m, blocked=blocked, transposed=item["kind"] == "ConvTranspose2d")


def _causal_conv1d_memory(item: Layer, s: Shape, out: Result) -> LayerMemory:
    """It keeps its input, left-padded: F.pad makes a new tensor, which the convolution saves (without
    padding, the input itself). oneDNN runs it on blocked copies, as Conv2d."""
    a = item["args"]
    steps, c, k, cout = s[0], s[1], scalar(a["kernel_size"]), int(a["out_channels"])
    left = (k - 1) * scalar(a.get("dilation", 1))
    padded = FLOAT_BYTES * c * (steps + left) if left else 0
    m = _plain(item, out, saves_input=not left, saves_output=False, saved=padded)
    blocked = (
        FLOAT_BYTES * _block(c) * (steps + left),
        FLOAT_BYTES * _block(cout) * steps,
        FLOAT_BYTES * _block(c) * _block(cout) * k,
    )
    return replace(m, blocked=blocked)


def _max_pool_memory(item: Layer, _s: Shape, out: Result) -> LayerMemory:
    return _plain(item, out, saves_input=True, saves_output=False, saved=INDEX_BYTES * _values(out[0]))


def _pool_over_time_memory(item: Layer, s: Shape, out: Result) -> LayerMemory:
    # a maximum's backward scatters the gradient through its indices, [features]; the input is not kept (the
    # last step needs nothing); the joined output is a new tensor
    pools = item["args"]["pools"]
    maxima = sum(p == "max" for p in pools)
    kept = _plain(item, out, saves_input=False, saves_output=False, saved=INDEX_BYTES * maxima * s[1])
    # each pool's backward writes a gradient the size of the whole sequence (zeros but for its steps), which
    # autograd then sums into a new one: with two pools, both beside their sum
    extra = len(pools) if len(pools) > 1 else 0
    return replace(kept, input_grad_extra=FLOAT_BYTES * extra * _values(s))


def _adaptive_avg_pool_memory(item: Layer, _s: Shape, out: Result) -> LayerMemory:
    # to 1x1 PyTorch takes a mean, whose backward needs only the shape
    size = item["args"]["output_size"]
    one = size == 1 or (not isinstance(size, int) and tuple(size) == (1, 1))
    return _plain(item, out, saves_input=not one, saves_output=False)


def _batch_norm_memory(_item: Layer, s: Shape, out: Result) -> LayerMemory:
    channels = s[0]
    # the batch's mean and inverse deviation (its running statistics are buffers: memory.py counts them
    # with the weights)
    fixed = 2 * channels * FLOAT_BYTES
    tensors = (channels, channels) if out[1] else ()
    return LayerMemory(out[0], FLOAT_BYTES * _values(out[0]), True, False, 0, fixed, tensors)


# --- embeddings


def _embedding_memory(_item: Layer, _s: Shape, out: Result) -> LayerMemory:
    # keeps the token ids, which are the batch (or the layer before's output, kept anyway); its backward
    # copies the output's gradient to be contiguous before it scatters it into the weight's
    size = FLOAT_BYTES * _values(out[0])
    return LayerMemory(out[0], size, True, False, 0, 0, (out[1],), grad_copy=size)


def _embedding_bag_memory(_item: Layer, s: Shape, out: Result) -> LayerMemory:
    # keeps the token ids and, per id, the int64 index of its bag (offset2bag); per bag its offset and size
    saved = INDEX_BYTES * (s[0] + 2)
    return LayerMemory(out[0], FLOAT_BYTES * _values(out[0]), True, False, saved, 0, (out[1],))


# --- recurrent layers


def _lstm_kept(steps: int, width: int, hidden: int) -> float:
    """Values oneDNN's LSTM (PyTorch's CPU path) keeps per example, layer and direction: its workspace of
    every step's gates and states, rows padded to max(input, hidden) rounded up to 8, plus a copy of the
    input. Fitted to PyTorch 2.13's own figure over 27 shapes (8-64 steps, 16-128 inputs, 32-256 units),
    within 6%."""
    row = -(-max(width, hidden) // 8) * 8
    return steps * (9.6 * hidden + 5.9 * row + 0.8 * width) + 13 * row


def _recurrent_memory(kind: str) -> MemoryRule:
    gates = GATES[kind]

    def rule(item: Layer, s: Shape, out: Result) -> LayerMemory:
        a = item["args"]
        steps, hidden = s[0], a["hidden_size"]
        dirs = 2 if a.get("bidirectional") else 1
        width, kept, tensors, transient, summed = a["input_size"], 0.0, [], 0, 0
        for _ in range(a.get("num_layers", 1)):
            # the GRU and RNN run as one cell per step, keeping KEPT values per unit and step and a copy
            # of the input (the RNN its first state too)
            if kind == "LSTM":
                per_dir = _lstm_kept(steps, width, hidden)
            else:
                per_dir = steps * (KEPT[kind] * hidden + width) + (hidden if kind == "RNN" else 0)
            kept += dirs * per_dir
            # the GRU's backward holds two step-by-unit gradient buffers of the layer it is in (fitted as
            # the LSTM's, within 3%)
            transient = max(transient, dirs * (2 * steps * hidden if kind == "GRU" else 0))
            tensors += [
                gates * hidden * width,
                gates * hidden * hidden,
                gates * hidden,
                gates * hidden,
            ] * dirs
            # a one-layer RNN sums its weights' gradients over the steps beside a fresh one per step
            # (measured; with more layers that buffer is gone before the peak)
            single = kind == "RNN" and a.get("num_layers", 1) == 1
            summed = max(summed, gates * hidden * (width + hidden) if single else 0)
            width = hidden * dirs
        if not a.get("bias", True):
            tensors = [t for i, t in enumerate(tensors) if i % 4 < 2]
        saved = round(FLOAT_BYTES * kept)
        # oneDNN's LSTM keeps its output too; the GRU and RNN stack theirs from states they keep anyway
        size = FLOAT_BYTES * _values(out[0])
        # the GRU and RNN gather the input's gradient step by step, then stack it: two copies at once
        extra = 0 if kind == "LSTM" else FLOAT_BYTES * steps * a["input_size"]
        return LayerMemory(
            out[0],
            size,
            False,
            kind == "LSTM",
            saved,
            0,
            tuple(tensors),
            backward=FLOAT_BYTES * transient,
            input_grad_extra=extra,
            backward_fixed=FLOAT_BYTES * summed,
        )

    return rule


# --- the advisor's own kinds


def _rbm_memory(item: Layer, _s: Shape, out: Result) -> LayerMemory:
    # the upward pass: linear (keeps its input) then a sigmoid (keeps its output)
    v, h = item["args"]["visible"], item["args"]["hidden"]
    return LayerMemory(out[0], FLOAT_BYTES * h, True, True, 0, 0, (v * h, v, h))


def _residual(a: LayerArgs, s: Shape) -> Result:
    body = count(a["body"], s)
    shortcut = count(a["shortcut"], s)
    if body.shape != shortcut.shape:
        raise ValueError(f"Residual body gives {body.shape}, shortcut {shortcut.shape}")
    kept = body.activations + shortcut.activations + math.prod(body.shape)
    return body.shape, body.parameters + shortcut.parameters, body.flops + shortcut.flops, kept


def _concat(a: LayerArgs, s: Shape) -> Result:
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


_ELEMENTWISE_SAVING_OUTPUT = Kind(elementwise, _saves_output, VALUES)
_VIEW = Kind(flatten, _view_memory, VIEW)

KINDS: dict[str, Kind] = {
    "Linear": Kind(linear, _weighted, PRODUCT, tensors=2),
    "ReLU": _ELEMENTWISE_SAVING_OUTPUT,
    "Sigmoid": _ELEMENTWISE_SAVING_OUTPUT,
    "Tanh": _ELEMENTWISE_SAVING_OUTPUT,
    "LeakyReLU": Kind(elementwise, _saves_input, VALUES),
    "Dropout": Kind(elementwise, _dropout_memory, VALUES, touches=2.0),
    "Flatten": _VIEW,
    "Reshape": Kind(reshape, _view_memory, VIEW),
    "LastStep": Kind(last_step, _view_memory, VIEW),
    # a reduction, not a window: one pass reads the sequence, the backward writes a gradient of its size
    "PoolOverTime": Kind(pool_over_time, _pool_over_time_memory, VALUES, touches=2.0),
    "Gaussian": Kind(gaussian, _view_memory, VIEW, tensors=1),
    "Conv2d": Kind(conv2d, _weighted, CONVOLUTION, tensors=2),
    "ConvTranspose2d": Kind(conv_transpose2d, _weighted, CONVOLUTION, tensors=2),
    "CausalConv1d": Kind(causal_conv1d, _causal_conv1d_memory, TEMPORAL_CONVOLUTION, tensors=2),
    "MaxPool2d": Kind(pool2d, _max_pool_memory, POOLING, touches=2.0),
    "AvgPool2d": Kind(pool2d, _saves_input, VALUES),
    "AdaptiveAvgPool2d": Kind(adaptive_pool2d, _adaptive_avg_pool_memory, VALUES),
    "BatchNorm2d": Kind(batch_norm, _batch_norm_memory, VALUES, tensors=2, touches=3.0),
    "BatchNorm1d": Kind(batch_norm, _batch_norm_memory, VALUES, tensors=2, touches=3.0),
    "Embedding": Kind(embedding, _embedding_memory, LOOKUP, tensors=1),
    "EmbeddingBag": Kind(embedding_bag, _embedding_bag_memory, LOOKUP, tensors=1),
    "LSTM": Kind(recurrent("LSTM"), _recurrent_memory("LSTM"), GATED_CELL, tensors=4),
    "GRU": Kind(recurrent("GRU"), _recurrent_memory("GRU"), GATED_CELL, tensors=4),
    "RNN": Kind(recurrent("RNN"), _recurrent_memory("RNN"), PLAIN_CELL, tensors=4),
    "RBM": Kind(rbm, _rbm_memory, CD1_PRODUCT, tensors=3),
    "Residual": Kind(_residual, None, BRANCHES),
    "Concat": Kind(_concat, None, BRANCHES),
}


def kinds_in(candidate: Trainable) -> set[str]:
    """Every layer kind a candidate's networks use, branches (Residual, Concat) included."""
    return {kind for layers in candidate["networks"].values() for kind in _kinds(layers)}


def _kinds(layers: list[Layer]) -> Iterator[str]:
    for layer in layers:
        yield layer["kind"]
        args = layer.get("args") or {}
        for branch in [args.get("body"), args.get("shortcut"), *(args.get("branches") or [])]:
            if branch:
                yield from _kinds(branch)
