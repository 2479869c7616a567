"""A timeline of the bytes a training step allocates and frees, and its peak: what the memory estimate is.

The step is replayed as PyTorch runs it: each network's forward pass allocates every layer's output and what
the layer keeps for backward (layers.py), and frees an output nobody keeps as soon as the next layer has
read it; the backward pass walks the layers in reverse, making the gradient of each layer's input and of its
parameters, and frees what a layer kept once its backward has run (autograd releases saved tensors then);
the optimiser then updates in place, with a few temporaries. On CUDA the caching allocator hands out
blocks rounded up to 512 bytes, which `Timeline(block=512)` charges.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from advisor.engine.layers import FLOAT_BYTES, LayerMemory

CATEGORIES = ("weights", "gradients", "optimizer", "activations", "batch", "workspace")
CUDA_BLOCK = 512  # bytes: the CUDA caching allocator's rounding of every block


class Timeline:
    """Live bytes by category; `at_peak` is the breakdown at the highest total seen."""

    def __init__(self, block: int = 1, *, record: bool = False) -> None:
        self.block = block
        # every allocation and free in order, for the heap model (heap.py); None when not asked for
        self.events: list[tuple[bool, str, int]] | None = [] if record else None
        self.live = dict.fromkeys(CATEGORIES, 0)
        self.total = 0
        self.peak = 0
        self.at_peak = dict(self.live)

    def size(self, n: float) -> int:
        n = int(n)
        return -(-n // self.block) * self.block if n > 0 else 0

    def alloc(self, category: str, n: float) -> int:
        n = self.size(n)
        if self.events is not None and n:
            self.events.append((True, category, n))
        self.live[category] += n
        self.total += n
        if self.total > self.peak:
            self.peak = self.total
            self.at_peak = dict(self.live)
        return n

    def free(self, category: str, n: float) -> None:
        """Free `n` bytes allocated in `category` (already rounded by alloc, or rounded now)."""
        n = self.size(n)
        if self.events is not None and n:
            self.events.append((False, category, n))
        self.live[category] -= n
        self.total -= n

    def transient(self, category: str, n: float) -> None:
        self.free(category, self.alloc(category, n))

    def kernel(self, *moves: tuple[bool, float]) -> None:
        """A kernel's private temporaries, (allocate?, bytes) in order: the heap model's alone, since
        PyTorch's dispatcher (the live peak's reference) never sees them."""
        if self.events is not None:
            self.events.extend((a, "kernel", int(n)) for a, n in moves if int(n) > 0)


@dataclass
class Graph:
    """One network's forward pass at a batch: what its backward needs and frees."""

    layers: Sequence[LayerMemory]
    batch: int
    inputs: list[int]  # bytes of each layer's input tensor
    frees: list[int]  # bytes freed once each layer's backward has run
    needs_grad: list[bool]  # whether each layer's input needs a gradient
    output: int = 0  # bytes of the network's output, held by the caller
    output_kept: bool = False  # a layer keeps the output for backward (freed with it)
    released: bool = field(default=False)

    def release_output(self, t: Timeline) -> None:
        """The caller is done with the output: it goes unless a layer keeps it."""
        if not self.released and not self.output_kept:
            t.free("activations", self.output)
        self.released = True


def forward(
    t: Timeline,
    layers: Sequence[LayerMemory],
    batch: int,
    *,
    input_bytes: int,
    input_owned: bool = True,
    input_needs_grad: bool = False,
) -> Graph:
    """Replay a layer chain's forward pass. `input_owned`: the caller holds the input (the batch, a generated
    image) and frees it; otherwise it goes as soon as nothing keeps it."""
    g = Graph(layers, batch, [], [0] * len(layers), [])
    current, owned, keepers = input_bytes, input_owned, list[int]()
    grad = input_needs_grad
    for i, m in enumerate(layers):
        g.inputs.append(current)
        g.needs_grad.append(grad)
        grad = grad or bool(m.tensors)
        if m.out_bytes == 0:  # a view: the same storage goes on
            continue
        conv = m.blocked[1] > 0
        if conv:
            _conv_forward(t, m, batch, current)
        out = t.alloc("activations", batch * m.out_bytes)
        if conv:
            t.kernel((False, batch * m.blocked[1]))  # the blocked output, once copied out
        extra = t.alloc("activations", batch * m.saved + m.saved_fixed)
        g.frees[i] += extra
        if m.saves_input:
            keepers.append(i)
        if not owned:
            if keepers:
                g.frees[min(keepers)] += current
            else:
                t.free("activations", current)
        current, owned, keepers = out, False, [i] if m.saves_output else []
    g.output = current if layers else 0
    if keepers:
        g.frees[min(keepers)] += current
        g.output_kept = True
    if not layers:
        g.released = True
    return g


def backward(t: Timeline, g: Graph, *, grad_out: int, accumulate: bool = False) -> int:
    """Replay the backward pass from a live gradient of the output (`grad_out` bytes, freed here); returns
    the bytes of the input's gradient left alive (0 if the input needs none). `accumulate`: the parameters
    already have gradients, so the new ones are added in place and freed."""
    grad = grad_out
    for i in reversed(range(len(g.layers))):
        m = g.layers[i]
        if m.out_bytes == 0:
            continue
        b, (blk_in, blk_out, blk_w) = g.batch, m.blocked
        if blk_out and g.needs_grad[i]:  # the input's gradient: from blocked copies, copied out
            gout = blk_out if blk_out == m.out_bytes else 0  # a padded one is read as it is
            t.kernel((True, b * gout), (True, blk_w), (True, b * blk_in), (False, blk_w), (False, b * gout))
        grad_in = t.alloc("workspace", g.inputs[i]) if g.needs_grad[i] else 0
        if g.needs_grad[i]:
            t.kernel((False, b * blk_in))
            t.transient("workspace", g.batch * m.input_grad_extra)
        # the weights' gradient: from blocked copies of the output's gradient and of the input (and an
        # embedding's from a contiguous copy of the output's gradient)
        t.kernel((True, b * blk_out), (True, b * blk_in), (True, blk_w), (False, b * blk_in))
        t.kernel((False, b * blk_out), (True, b * m.grad_copy))
        for n in m.tensors:
            if accumulate:
                t.transient("workspace", FLOAT_BYTES * n)
            else:
                t.alloc("gradients", FLOAT_BYTES * n)
        t.kernel((False, blk_w), (False, b * m.grad_copy))
        t.transient("workspace", g.batch * m.backward + m.backward_fixed)
        t.free("workspace", grad)
        t.free("activations", g.frees[i])
        grad = grad_in
    return grad


def _conv_forward(t: Timeline, m: LayerMemory, batch: int, input_bytes: int) -> None:
    """oneDNN's convolution (measured with a malloc trace, bench/malloc_trace.py): blocked copies of the
    input (unless its channels need padding: a first layer's kernel reads the image as it is), the weights
    and the output are made; the first two go before the output is copied out. A transposed convolution
    first makes an output-sized buffer it drops once it has run."""
    blk_in, blk_out, blk_w = m.blocked
    blk_in = blk_in if batch * blk_in == input_bytes else 0
    first = batch * blk_out if m.transposed else 0
    t.kernel((True, first), (True, batch * blk_in), (True, blk_w), (True, batch * blk_out))
    t.kernel((False, blk_w), (False, batch * blk_in), (False, first))


def tensors_of(layers: Sequence[LayerMemory]) -> list[int]:
    return [n for m in layers for n in m.tensors]


def hold(t: Timeline, category: str, tensors: Sequence[int], copies: int = 1) -> None:
    """Allocate `copies` buffers the size of each parameter tensor (weights, gradients, optimiser state)."""
    for _ in range(copies):
        for n in tensors:
            t.alloc(category, FLOAT_BYTES * n)


def release(t: Timeline, category: str, tensors: Sequence[int]) -> None:
    for n in tensors:
        t.free(category, FLOAT_BYTES * n)


# optimiser state per parameter tensor (torch.optim): SGD keeps a momentum buffer only with momentum
_STATES = {"sgd": 1, "momentum": 1, "adam": 2, "adamw": 2, "rmsprop": 1, "adagrad": 1, "adadelta": 2}


def optimizer_states(optimizer: str, momentum: float | None) -> int:
    name = optimizer.lower()
    if name == "sgd":
        return 1 if momentum else 0
    return _STATES.get(name, 1)


def optimizer_step(t: Timeline, tensors: Sequence[int], optimizer: str, *, foreach: bool) -> None:
    """The update's temporaries: SGD and momentum update in place; Adam's denominator (the square root of the
    second moment, then divided) is two tensors at once, per parameter on the CPU, or one of every
    parameter at once with the multi-tensor (foreach) update that PyTorch uses on CUDA."""
    if optimizer.lower() not in ("adam", "adamw", "rmsprop", "adadelta") or not tensors:
        return
    if foreach:
        hold(t, "workspace", tensors)
        release(t, "workspace", tensors)
    else:
        t.transient("workspace", 2 * FLOAT_BYTES * max(tensors))
