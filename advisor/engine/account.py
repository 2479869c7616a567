"""What one layer keeps alive in a training step, per example: the facts the memory timeline is built from.

Each rule says what PyTorch's autograd saves for the backward pass (checked against PyTorch's own live-tensor
figure, tests/engine/test_memory.py): a linear or convolution layer keeps its input, ReLU/Sigmoid/Tanh their
output, LeakyReLU its input, max-pooling its input and int64 indices, batch-norm its input and per-channel
statistics, dropout its mask (a float tensor on the CPU), an embedding its token ids (the batch itself), a
recurrent layer every time step's gates and states. A tensor two layers save is one storage, counted once by
the timeline (memory.py). Shapes exclude the batch dimension.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace

from advisor.engine.layers import Layer, Shape, count

FLOAT_BYTES = 4  # training in FP32
INDEX_BYTES = 8  # int64 token ids and pooling indices


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


def _values(shape: Shape) -> int:
    return math.prod(shape)


def _plain(layer: Layer, s: Shape, *, saves_input: bool, saves_output: bool, saved: int = 0) -> LayerMemory:
    c = count([layer], s)
    args = layer["args"]
    bias = c.shape[0] if layer["kind"].startswith("Conv") else args.get("out_features", 0)
    has_bias = args.get("bias", True) and c.parameters
    tensors = (c.parameters - bias, bias) if has_bias else ((c.parameters,) if c.parameters else ())
    return LayerMemory(c.shape, FLOAT_BYTES * _values(c.shape), saves_input, saves_output, saved, 0, tensors)


def _weighted(layer: Layer, s: Shape) -> LayerMemory:
    m = _plain(layer, s, saves_input=True, saves_output=False)
    if layer["kind"] in ("Conv2d", "ConvTranspose2d"):
        a = layer["args"]
        k = a["kernel_size"]
        kernel = k * k if isinstance(k, int) else int(k[0]) * int(k[1])
        blocked = (
            FLOAT_BYTES * _block(s[0]) * math.prod(s[1:]),
            FLOAT_BYTES * _block(m.shape[0]) * math.prod(m.shape[1:]),
            FLOAT_BYTES * _block(s[0]) * _block(m.shape[0]) * kernel // a.get("groups", 1),
        )
        return replace(m, blocked=blocked, transposed=layer["kind"] == "ConvTranspose2d")
    return m


# oneDNN lays a convolution's channels out in blocks of 8 floats on AVX2 (16 on AVX-512): measured on the
# AMD EPYC (AVX2) machine, a 1-channel image is copied as 8 channels
# (bench/results/memory_amd-epyc-2c_repeats/README.md)
CHANNEL_BLOCK = 8


def _block(channels: int) -> int:
    return -(-channels // CHANNEL_BLOCK) * CHANNEL_BLOCK


def _saves_output(layer: Layer, s: Shape) -> LayerMemory:
    return _plain(layer, s, saves_input=False, saves_output=True)


def _saves_input(layer: Layer, s: Shape) -> LayerMemory:
    return _plain(layer, s, saves_input=True, saves_output=False)


def _view(layer: Layer, s: Shape) -> LayerMemory:
    return LayerMemory(count([layer], s).shape, 0, False, False, 0, 0, ())


def _dropout(layer: Layer, s: Shape) -> LayerMemory:
    # on the CPU dropout multiplies by a float noise tensor of the input's size and keeps it
    return _plain(layer, s, saves_input=False, saves_output=False, saved=FLOAT_BYTES * _values(s))


def _max_pool(layer: Layer, s: Shape) -> LayerMemory:
    out = count([layer], s).shape
    return _plain(layer, s, saves_input=True, saves_output=False, saved=INDEX_BYTES * _values(out))


def _adaptive_avg_pool(layer: Layer, s: Shape) -> LayerMemory:
    # to 1x1 PyTorch takes a mean, whose backward needs only the shape
    size = layer["args"]["output_size"]
    one = size == 1 or (not isinstance(size, int) and tuple(size) == (1, 1))
    return _plain(layer, s, saves_input=not one, saves_output=False)


def _batch_norm(layer: Layer, s: Shape) -> LayerMemory:
    c = count([layer], s)
    channels = s[0]
    # the batch's mean and inverse deviation (its running statistics are buffers: memory.py counts them
    # with the weights)
    fixed = 2 * channels * FLOAT_BYTES
    tensors = (channels, channels) if c.parameters else ()
    return LayerMemory(c.shape, FLOAT_BYTES * _values(c.shape), True, False, 0, fixed, tensors)


def _embedding(layer: Layer, s: Shape) -> LayerMemory:
    c = count([layer], s)
    # keeps the token ids, which are the batch (or the layer before's output, kept anyway); its backward
    # copies the output's gradient to be contiguous before it scatters it into the weight's
    out = FLOAT_BYTES * _values(c.shape)
    return LayerMemory(c.shape, out, True, False, 0, 0, (c.parameters,), grad_copy=out)


def _embedding_bag(layer: Layer, s: Shape) -> LayerMemory:
    c = count([layer], s)
    # keeps the token ids and, per id, the int64 index of its bag (offset2bag); per bag its offset and size
    saved = INDEX_BYTES * (s[0] + 2)
    return LayerMemory(c.shape, FLOAT_BYTES * _values(c.shape), True, False, saved, 0, (c.parameters,))


def _lstm_kept(steps: int, width: int, hidden: int) -> float:
    """Values oneDNN's LSTM (PyTorch's CPU path) keeps per example, layer and direction: its workspace of
    every step's gates and states, rows padded to max(input, hidden) rounded up to 8, plus a copy of the
    input. Fitted to PyTorch 2.13's own figure over 27 shapes (8-64 steps, 16-128 inputs, 32-256 units),
    within 6%."""
    row = -(-max(width, hidden) // 8) * 8
    return steps * (9.6 * hidden + 5.9 * row + 0.8 * width) + 13 * row


def _recurrent(kind: str) -> Callable[[Layer, Shape], LayerMemory]:
    gates = {"LSTM": 4, "GRU": 3, "RNN": 1}[kind]

    def rule(layer: Layer, s: Shape) -> LayerMemory:
        c = count([layer], s)
        a = layer["args"]
        steps, hidden = s[0], a["hidden_size"]
        dirs = 2 if a.get("bidirectional") else 1
        width, kept, tensors, transient, summed = a["input_size"], 0.0, [], 0, 0
        for _ in range(a.get("num_layers", 1)):
            # GRU and RNN run as one cell per step: the GRU keeps 7 values per unit and step (its gates,
            # their products and the new state), the RNN its state; both keep a copy of the input
            per_dir = {
                "LSTM": _lstm_kept(steps, width, hidden),
                "GRU": steps * (7 * hidden + width),
                "RNN": steps * (hidden + width) + hidden,
            }[kind]
            kept += dirs * per_dir
            # the GRU's backward holds two step-by-unit gradient buffers of the layer it is in (fitted as
            # above, within 3%)
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
        out = FLOAT_BYTES * _values(c.shape)
        # the GRU and RNN gather the input's gradient step by step, then stack it: two copies at once
        extra = 0 if kind == "LSTM" else FLOAT_BYTES * steps * a["input_size"]
        return LayerMemory(
            c.shape,
            out,
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


def _rbm(layer: Layer, s: Shape) -> LayerMemory:
    # the upward pass: linear (keeps its input) then a sigmoid (keeps its output)
    c = count([layer], s)
    v, h = layer["args"]["visible"], layer["args"]["hidden"]
    return LayerMemory(c.shape, FLOAT_BYTES * h, True, True, 0, 0, (v * h, v, h))


RULES: dict[str, Callable[[Layer, Shape], LayerMemory]] = {
    "Linear": _weighted,
    "Conv2d": _weighted,
    "ConvTranspose2d": _weighted,
    "ReLU": _saves_output,
    "Sigmoid": _saves_output,
    "Tanh": _saves_output,
    "LeakyReLU": _saves_input,
    "AvgPool2d": _saves_input,
    "Dropout": _dropout,
    "Flatten": _view,
    "Reshape": _view,
    "LastStep": _view,
    "MaxPool2d": _max_pool,
    "AdaptiveAvgPool2d": _adaptive_avg_pool,
    "BatchNorm2d": _batch_norm,
    "BatchNorm1d": _batch_norm,
    "Embedding": _embedding,
    "EmbeddingBag": _embedding_bag,
    "LSTM": _recurrent("LSTM"),
    "GRU": _recurrent("GRU"),
    "RNN": _recurrent("RNN"),
    "RBM": _rbm,
}


def layer_memory(layer: Layer, shape: Shape) -> LayerMemory:
    """One plain layer's account; Residual and Concat, made of layer lists, are memory.composite_memory's."""
    rule = RULES.get(layer["kind"])
    if rule is None:
        raise ValueError(f"unknown layer kind {layer['kind']!r}")
    return rule(layer, shape)
