"""Training memory: the peak of what one training step keeps alive, at the candidate's mini-batch.

Each family's step is replayed on a Timeline (timeline.py) in the order advisor/calibration/steps.py runs it:
weights, optimiser state and the batch live throughout; the forward pass keeps what autograd saves per layer
(the memory rules of layers.py), the backward pass frees it layer by layer while it makes the gradients, and
the optimiser's update adds its temporaries. `memory_bytes` is the breakdown at the peak (it sums to
`total`): weights, gradients, optimizer (state), activations (saved for backward), batch (inputs and
targets), workspace (gradient buffers in flight and the optimiser's temporaries).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from typing import Any

from advisor.contract import Layer, MemoryBytes, Trainable
from advisor.engine.codepages import code_pages
from advisor.engine.families import family_of, roles
from advisor.engine.families.family import ADVERSARIAL, BACKPROP, CONTRASTIVE, PRETRAINED, VARIATIONAL, Step
from advisor.engine.heap import resident_growth
from advisor.engine.layers import (
    FLOAT_BYTES,
    INDEX_BYTES,
    KINDS,
    Counts,
    LayerMemory,
    count,
    layer_memory,
)
from advisor.engine.layershapes import Shape
from advisor.engine.timeline import (
    CUDA_BLOCK,
    Timeline,
    backward,
    forward,
    hold,
    optimizer_states,
    optimizer_step,
    release,
    tensors_of,
)

TOKEN_BYTES = INDEX_BYTES


def count_networks(candidate: Trainable) -> dict[str, Counts]:
    inputs = roles.network_inputs(candidate)
    return {key: count(layers, inputs[key]) for key, layers in candidate["networks"].items()}


def kept_activations(counts: dict[str, Counts]) -> int:
    """Values kept for backward per example; a GAN's discriminator runs on a real and a generated batch."""
    return sum(c.activations * (2 if key == roles.DISCRIMINATOR else 1) for key, c in counts.items())


# Layers made of layer lists (Residual, Concat): their account is their branches' (chain_kept), so it lives
# here with chain.
COMPOSITES = tuple(name for name, kind in KINDS.items() if kind.memory is None)


def chain(layers: Sequence[Layer], shape: Shape) -> list[LayerMemory]:
    result: list[LayerMemory] = []
    current = tuple(shape)
    for item in layers:
        m = composite_memory(item, current) if item["kind"] in COMPOSITES else layer_memory(item, current)
        result.append(m)
        current = m.shape
    return result


def chain_kept(layers: Sequence[Layer], shape: Shape) -> tuple[int, bool, list[int]]:
    """A branch of Residual/Concat at one example: bytes it keeps for backward (its input aside), whether it
    keeps its input, and its parameter tensors."""
    mems = chain(layers, shape)
    t = Timeline()
    g = forward(t, mems, 1, input_bytes=FLOAT_BYTES * math.prod(shape))
    input_kept = any(m.saves_input for m in mems[:1]) or (
        bool(mems) and mems[0].out_bytes == 0 and any(m.saves_input for m in mems[1:2])
    )
    return t.total - (0 if g.output_kept else g.output), input_kept, tensors_of(mems)


def composite_memory(layer: Layer, s: Shape) -> LayerMemory:
    """Residual and Concat: each branch's own account, the branches' outputs kept for the sum or concat."""
    branches = (
        [layer["args"]["body"], layer["args"]["shortcut"]]
        if layer["kind"] == "Residual"
        else layer["args"]["branches"]
    )
    c = count([layer], s)
    saved = saves_input = 0
    tensors: list[int] = []
    for branch in branches:
        kept, first_saves_input, branch_tensors = chain_kept(branch, s)
        saved += kept
        saves_input |= first_saves_input
        tensors += branch_tensors
    out = FLOAT_BYTES * math.prod(c.shape)
    # Concat's backward hands each branch its share of the output's gradient, copied to be contiguous
    share = out // len(branches) if layer["kind"] == "Concat" else 0
    return LayerMemory(c.shape, out, bool(saves_input), False, saved, 0, tuple(tensors), backward=share)


class _Step:
    """A family's step on one Timeline: the shared moves (parameters, a network's pass, the update)."""

    def __init__(self, candidate: Trainable, batch: int, device: str, *, record: bool = False) -> None:
        self.c, self.b = candidate, batch
        self.cuda = device.startswith("cuda")
        self.t = Timeline(CUDA_BLOCK if self.cuda else 1, record=record)
        training = candidate.get("training") or {}
        self.optimizer = str(training.get("optimizer") or "sgd")
        self.states = optimizer_states(self.optimizer, training.get("momentum"))
        self.inputs = roles.network_inputs(candidate)
        self.nets = {key: chain(layers, self.inputs[key]) for key, layers in candidate["networks"].items()}
        self.loss = str(training.get("loss") or "")

    def tensors(self, *keys: str) -> list[int]:
        return [n for key in keys for n in tensors_of(self.nets[key])]

    def parameters(self, optimised: Sequence[Sequence[str]]) -> None:
        """Weights of every network, and one optimiser's state per group of networks it updates."""
        hold(self.t, "weights", self.tensors(*self.nets))
        for layers in self.nets.values():  # batch-norm's running statistics live with the weights
            for m in layers:
                if m.saved_fixed:
                    self.t.alloc("weights", m.saved_fixed + INDEX_BYTES)
        for keys in optimised:
            hold(self.t, "optimizer", self.tensors(*keys), self.states)

    def batch_bytes(self, values: int, dtype_bytes: int) -> int:
        return self.t.alloc("batch", self.b * values * dtype_bytes)

    def update(self, *keys: str) -> None:
        optimizer_step(self.t, self.tensors(*keys), self.optimizer, foreach=self.cuda)

    def loss_backward(
        self, g: Any, *, keeps_output: bool, accumulate: bool = False, temporaries: int = 0
    ) -> int:
        """A loss on the network's output: cross-entropy keeps its log-softmax, the others the output
        itself; its backward makes the output's gradient through intermediates of the same size (one for
        cross-entropy; the difference and its scaled copy for a reconstruction or regression loss, unless
        `temporaries` says otherwise)."""
        out = g.output
        kept = self.t.alloc("activations", out) if not keeps_output else 0
        if not keeps_output:
            g.release_output(self.t)
        grad = self.t.alloc("workspace", out)
        self.t.transient("workspace", out * (temporaries or (2 if keeps_output else 1)))
        self.t.free("activations", kept)
        if keeps_output:
            g.release_output(self.t)
        return backward(self.t, g, grad_out=grad, accumulate=accumulate)


def _backprop(s: _Step) -> None:
    io = s.c["io"]
    token = io.get("input_dtype") == "int64" or bool(io.get("vocab_size"))
    values = math.prod(io["input_shape"])
    x = s.batch_bytes(values, TOKEN_BYTES if token else FLOAT_BYTES)
    target = io.get("target") or "class"
    mems = s.nets[roles.MODEL]
    out_values = math.prod(mems[-1].shape) if mems else values
    ce = s.loss == "cross_entropy" or (not s.loss and target in ("class", "class_per_step"))
    if target != "input":
        steps = int(io["input_shape"][0]) if target == "class_per_step" else 1
        s.batch_bytes(steps if ce else out_values, INDEX_BYTES if ce else FLOAT_BYTES)
    s.parameters([[roles.MODEL]])
    g = forward(s.t, mems, s.b, input_bytes=x)
    s.loss_backward(g, keeps_output=not ce)
    s.update(roles.MODEL)


def _vae(s: _Step) -> None:
    x = s.batch_bytes(math.prod(s.c["io"]["input_shape"]), FLOAT_BYTES)
    s.parameters([[roles.ENCODER, roles.DECODER]])
    latent = s.inputs[roles.DECODER][0]  # the latent code: the decoder's input
    # mean and log-variance are views of the encoder's output, which the KL term keeps; the sample keeps its
    # noise and exp(log_var / 2), the KL term exp(log_var)
    z = LayerMemory((latent,), FLOAT_BYTES * latent, True, False, 3 * FLOAT_BYTES * latent, 0, ())
    g = forward(s.t, [*s.nets[roles.ENCODER], z, *s.nets[roles.DECODER]], s.b, input_bytes=x)
    s.loss_backward(g, keeps_output=True, temporaries=1)  # measured: the ELBO's backward keeps fewer
    s.update(roles.ENCODER, roles.DECODER)


def _gan(s: _Step) -> None:
    """pytorch/examples' DCGAN step: G(z) once; D on real and on G(z) detached, D's update; then D on G(z)
    and back through D into G, G's update. Each network's gradients live from its backward to the next
    step's zero_grad, so the other network's gradients are alive during each half."""
    real = s.batch_bytes(math.prod(s.c["io"]["input_shape"]), FLOAT_BYTES)
    s.parameters([[roles.GENERATOR], [roles.DISCRIMINATOR]])
    gen, disc = s.tensors(roles.GENERATOR), s.tensors(roles.DISCRIMINATOR)
    hold(s.t, "gradients", gen)
    hold(s.t, "gradients", disc)
    z = s.t.alloc("activations", s.b * FLOAT_BYTES * s.inputs[roles.GENERATOR][0])  # the latent code
    g_pass = forward(s.t, s.nets[roles.GENERATOR], s.b, input_bytes=z, input_owned=False)
    release(s.t, "gradients", disc)  # opt_d.zero_grad
    d_real = forward(s.t, s.nets[roles.DISCRIMINATOR], s.b, input_bytes=real)
    d_fake = forward(s.t, s.nets[roles.DISCRIMINATOR], s.b, input_bytes=g_pass.output)
    s.loss_backward(d_fake, keeps_output=True)
    s.loss_backward(d_real, keeps_output=True, accumulate=True)
    s.update(roles.DISCRIMINATOR)
    release(s.t, "gradients", gen)  # opt_g.zero_grad
    d_on_fake = forward(
        s.t, s.nets[roles.DISCRIMINATOR], s.b, input_bytes=g_pass.output, input_needs_grad=True
    )
    grad_fake = s.loss_backward(d_on_fake, keeps_output=True, accumulate=True)
    backward(s.t, g_pass, grad_out=grad_fake)
    g_pass.release_output(s.t)
    s.update(roles.GENERATOR)


def _cd1(s: _Step, key: str, v: int) -> int:
    """Contrastive divergence on every RBM of a stack, without autograd: up, sample, down, up, then the
    weight gradient from two outer products. Returns the bytes of the last hidden probabilities."""
    b, t, owned = s.b, s.t, True
    for m in s.nets[key]:
        h, vis = m.shape[0], m.tensors[1]
        up = [t.alloc("activations", b * FLOAT_BYTES * h)]  # each product goes through a sigmoid
        t.transient("workspace", b * FLOAT_BYTES * h)
        sample = t.alloc("activations", b * FLOAT_BYTES * h)
        down = t.alloc("activations", b * FLOAT_BYTES * vis)
        t.transient("workspace", b * FLOAT_BYTES * vis)
        up.append(t.alloc("activations", b * FLOAT_BYTES * h))
        t.transient("workspace", b * FLOAT_BYTES * h)
        weight = FLOAT_BYTES * m.tensors[0]
        products = [t.alloc("workspace", weight), t.alloc("workspace", weight)]
        difference = t.alloc("workspace", weight)
        for p in products:
            t.free("workspace", p)
        t.alloc("gradients", weight)
        t.free("workspace", difference)
        for n, per_example in ((vis, vis), (h, h)):  # the bias gradients: a mean over the batch
            t.transient("workspace", b * FLOAT_BYTES * per_example)
            t.alloc("gradients", FLOAT_BYTES * n)
        for n in (sample, down, up[1]):
            t.free("activations", n)
        if not owned:
            t.free("activations", v)
        v, owned = up[0], False
    return v


def _rbm(s: _Step) -> None:
    v = s.batch_bytes(math.prod(s.c["io"]["input_shape"]), FLOAT_BYTES)
    s.parameters([[roles.MODEL]])
    s.t.free("activations", _cd1(s, roles.MODEL, v))
    s.update(roles.MODEL)


def _dbn(s: _Step) -> None:
    """Greedy CD-1 on every RBM (its own optimiser), then one fine-tuning step through the stack and the
    classifier (a second optimiser, over both: the stack's state is kept twice)."""
    v = s.batch_bytes(math.prod(s.c["io"]["input_shape"]), FLOAT_BYTES)
    s.batch_bytes(1, INDEX_BYTES)
    s.parameters([[roles.STACK], [roles.STACK, roles.CLASSIFIER]])
    hold(s.t, "gradients", s.tensors(roles.CLASSIFIER))  # the last fine-tuning's, until its zero_grad
    s.t.free("activations", _cd1(s, roles.STACK, v))
    s.update(roles.STACK)
    release(s.t, "gradients", s.tensors(roles.STACK, roles.CLASSIFIER))  # finetune.zero_grad
    # up the stack with autograd: each RBM's linear output goes through a sigmoid, which keeps its result
    g = forward(s.t, [*s.nets[roles.STACK], *s.nets[roles.CLASSIFIER]], s.b, input_bytes=v)
    s.loss_backward(g, keeps_output=False)
    s.update(roles.STACK, roles.CLASSIFIER)


# each way of training (families/family.py), replayed as advisor/calibration/steps.py runs it
REPLAYS: dict[Step, Callable[[_Step], None]] = {
    BACKPROP: _backprop,
    ADVERSARIAL: _gan,
    VARIATIONAL: _vae,
    CONTRASTIVE: _rbm,
    PRETRAINED: _dbn,
}


def replay(step: _Step) -> None:
    """Replay the training step of `step`'s candidate's family on its timeline."""
    REPLAYS[family_of(step.c).step](step)


def memory_for(candidate: Trainable, *, batch_size: int, device: str = "cpu") -> MemoryBytes:
    """The memory_bytes breakdown of a candidate's training step at a mini-batch size, on "cpu" or "cuda"."""
    if batch_size < 1:
        raise ValueError("batch_size must be at least 1")
    if candidate.get("published") is None:
        return _replay(candidate, batch_size, device)
    # published networks are large and always the same for a shape and class count: replay them once
    training = candidate.get("training") or {}
    io = candidate["io"]
    key = (
        candidate["published"],
        tuple(io["input_shape"]),
        io.get("outputs"),
        training.get("optimizer"),
        training.get("momentum"),
        batch_size,
        device,
    )
    if key not in _PUBLISHED:
        if len(_PUBLISHED) > 256:
            _PUBLISHED.clear()
        _PUBLISHED[key] = _replay(candidate, batch_size, device)
    return _PUBLISHED[key].copy()


_PUBLISHED: dict[tuple[Any, ...], MemoryBytes] = {}


# steps the resident set is followed over: measure() runs a warm-up and at least three timed steps, and the
# heap's high-water mark stops rising after the second in the model
# (bench/results/memory_intel-xeon-2c_fresh/README.md)
RESIDENT_STEPS = 4


def resident_for(candidate: Trainable, *, batch_size: int, steps: int = RESIDENT_STEPS) -> int:
    """The CPU process's resident-set growth over `steps` training steps under glibc with the harness's
    thresholds: the same replay as memory_for, with the kernels' private temporaries, its allocations placed
    on a simulated heap (heap.py: memalign's padding, each tensor's small companion block, lazily made
    optimiser state, the holes freed tensors leave), plus the library code its kernels first bring in
    (codepages.py). Above memory_for's "total", which stays what batch fitting uses."""
    if batch_size < 1:
        raise ValueError("batch_size must be at least 1")
    key = (
        json.dumps(candidate["networks"], sort_keys=True),
        json.dumps(candidate["io"], sort_keys=True),
        json.dumps(candidate.get("training") or {}, sort_keys=True),
        batch_size,
        steps,
    )
    if key not in _RESIDENT:
        if len(_RESIDENT) > 1024:
            _RESIDENT.clear()
        step = _Step(candidate, batch_size, "cpu", record=True)
        replay(step)
        _RESIDENT[key] = resident_growth(step.t.events or [], steps=steps) + code_pages(candidate)
    return _RESIDENT[key]


_RESIDENT: dict[tuple[Any, ...], int] = {}


def _replay(candidate: Trainable, batch_size: int, device: str) -> MemoryBytes:
    step = _Step(candidate, batch_size, device)
    replay(step)
    live = step.t.at_peak
    return {
        "weights": live["weights"],
        "gradients": live["gradients"],
        "optimizer": live["optimizer"],
        "activations": live["activations"],
        "batch": live["batch"],
        "workspace": live["workspace"],
        "total": step.t.peak,
    }
