"""Seconds per training step from a device profile, layer by layer, over the family's real step.

Each layer's forward + backward time is read off the profile's curve for its kind at its forward FLOPs for
the batch (products: Linear, RBM; convolutions; recurrent cells per time step) or, for the other layers, at
the values it touches (activations, pooling, normalisation, embedding look-ups). A product is also at least
as slow as moving its operands through memory at the element-wise rate (the larger of compute and memory
time, as in a roofline). The optimiser's step is read off its curve at the parameter count, plus its cost
per parameter tensor; each step adds the fixed cost of a step. The family's step decides what runs
(advisor/calibration/steps.py): a GAN trains the discriminator on real and fake images and then the generator
through it (G once, D three times, two optimiser steps); the VAE runs encoder and decoder; an RBM's CD-1 makes
five products of its weights without autograd; a DBN does CD-1 on every RBM and then one fine-tuning step.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from advisor.engine.layers import _KINDS, Layer, Shape
from advisor.engine.profile import DeviceProfile, ThreadProfile, at_threads, interpolate

_PRODUCTS = {"Linear"}
_CONVS = {"Conv2d", "ConvTranspose2d"}
_RECURRENT = {"LSTM", "GRU", "RNN"}
_FREE = {"Flatten", "Reshape", "LastStep"}  # views: no kernel worth counting
_VALUE_WEIGHT = {"BatchNorm2d": 3.0, "BatchNorm1d": 3.0, "MaxPool2d": 2.0, "Dropout": 2.0}
_ADAM_LIKE = {"adam", "adamw", "rmsprop", "adagrad", "adadelta"}
# CD-1 (steps.cd1_gradients): three products forward-sized (up, down, up) and two outer products; the
# profile's Linear curve is forward + backward, three products
_CD1_SHARE = 5 / 3


@dataclass(frozen=True)
class StepCost:
    seconds: float
    compute: float  # seconds of products, convolutions and recurrent cells
    other: float  # element-wise layers, the optimiser and the step's fixed cost


def _layer_seconds(item: Layer, shape: Shape, batch: int, rates: ThreadProfile) -> tuple[Shape, float, float]:
    """(output shape, compute seconds, other seconds) of one layer's forward + backward for a batch."""
    kind, args = item["kind"], item["args"]
    if kind == "Residual":
        out, c1, o1 = _network_seconds(args["body"], shape, batch, rates)
        _, c2, o2 = _network_seconds(args["shortcut"], shape, batch, rates)
        return out, c1 + c2, o1 + o2 + interpolate(rates["elementwise"], batch * math.prod(out))
    if kind == "Concat":
        parts = [_network_seconds(branch, shape, batch, rates) for branch in args["branches"]]
        out = (sum(p[0][0] for p in parts), *parts[0][0][1:])
        extra = interpolate(rates["elementwise"], batch * math.prod(out))
        return out, sum(p[1] for p in parts), sum(p[2] for p in parts) + extra
    out, _params, flops, _kept = _KINDS[kind](args, shape)
    values = batch * (math.prod(shape) + math.prod(out))
    memory = interpolate(rates["elementwise"], values)
    if kind in _PRODUCTS or kind == "RBM":
        return out, max(interpolate(rates["linear"], batch * flops), memory), 0.0
    if kind in _CONVS:
        return out, max(interpolate(rates["conv"], batch * flops), memory), 0.0
    if kind in _RECURRENT:
        # one cell per layer, direction and time step, each a few small kernels: the count matters more
        # than the FLOPs for small cells
        cells = shape[0] * args.get("num_layers", 1) * (2 if args.get("bidirectional") else 1)
        curve = rates["rnn"] if kind == "RNN" else rates["recurrent"]
        return out, cells * interpolate(curve, batch * flops / max(1, cells)), 0.0
    if kind in _FREE:
        return out, 0.0, 0.0
    if kind == "Embedding":
        return out, 0.0, interpolate(rates["elementwise"], batch * math.prod(out))
    weight = _VALUE_WEIGHT.get(kind, 1.0)
    return out, 0.0, weight * interpolate(rates["elementwise"], batch * max(math.prod(shape), math.prod(out)))


def _network_seconds(
    layers: list[Layer], shape: Shape, batch: int, rates: ThreadProfile
) -> tuple[Shape, float, float]:
    compute = other = 0.0
    for item in layers:
        shape, c, o = _layer_seconds(item, shape, batch, rates)
        compute += c
        other += o
    return shape, compute, other


def _tensors(layers: list[Layer]) -> int:
    """Parameter tensors (weight and bias per layer with parameters) that an optimiser step walks over."""
    total = 0
    for item in layers:
        kind, args = item["kind"], item["args"]
        if kind == "Residual":
            total += _tensors(args["body"]) + _tensors(args["shortcut"])
        elif kind == "Concat":
            total += sum(_tensors(b) for b in args["branches"])
        elif kind in _RECURRENT:
            total += 4 * args.get("num_layers", 1) * (2 if args.get("bidirectional") else 1)
        elif kind == "RBM":
            total += 3
        elif kind in _PRODUCTS | _CONVS | {"BatchNorm2d", "BatchNorm1d"}:
            total += 2
        elif kind == "Embedding":
            total += 1
    return total


def _optimizer_seconds(rates: ThreadProfile, optimizer: str, parameters: int, tensors: int) -> float:
    """Beyond the step's fixed cost, which includes a small SGD step (profile.step_seconds)."""
    name = "adam" if optimizer in _ADAM_LIKE else "sgd"
    floor = rates["optimizer"]["sgd"][0][1]
    return (
        max(0.0, interpolate(rates["optimizer"][name], parameters) - floor)
        + max(0, tensors - 2) * rates["optimizer_tensor_seconds"][name]
    )


def _input(candidate: dict[str, Any], network: str) -> Shape:
    io = candidate["io"]
    if network in ("generator", "decoder"):
        return (int(io["latent_size"]),)
    shape = tuple(int(s) for s in io["input_shape"])
    if candidate["family"] in ("rbm", "dbn") and network in ("model", "rbm"):
        return (math.prod(shape),)
    if network == "classifier":
        return _network_output(candidate, "rbm")
    return shape


def _network_output(candidate: dict[str, Any], network: str) -> Shape:
    shape = _input(candidate, network)
    for item in candidate["networks"][network]:
        shape = _KINDS[item["kind"]](item["args"], shape)[0]
    return shape


def _parameters(candidate: dict[str, Any], network: str) -> int:
    shape = _input(candidate, network)
    total = 0
    for item in candidate["networks"][network]:
        shape, params, _, _ = _KINDS[item["kind"]](item["args"], shape)
        total += params
    return total


_PUBLISHED: dict[tuple[Any, ...], StepCost] = {}


def step_cost(
    candidate: dict[str, Any], *, batch_size: int, threads: int, profile: DeviceProfile
) -> StepCost:
    """Seconds of one training step of `candidate` at `batch_size` and `threads` on the profiled device."""
    if candidate.get("published") is None:
        return _step_cost(candidate, batch_size, threads, profile)
    # published networks are large (ResNet-50: 30 ms of walking its layers) and the same for a shape, class
    # count and optimiser: cost them once per profile, as candidate.py counts them once
    io = candidate["io"]
    key = (
        candidate["published"],
        tuple(io["input_shape"]),
        io["outputs"],
        candidate["training"].get("optimizer"),
        batch_size,
        threads,
        profile["processor"],
        profile["profiled_at"],
    )
    if key not in _PUBLISHED:
        if len(_PUBLISHED) > 1024:
            _PUBLISHED.clear()
        _PUBLISHED[key] = _step_cost(candidate, batch_size, threads, profile)
    return _PUBLISHED[key]


def _step_cost(candidate: dict[str, Any], batch_size: int, threads: int, profile: DeviceProfile) -> StepCost:
    rates = at_threads(profile, threads)
    family = candidate["family"]
    optimizer = str(candidate["training"].get("optimizer") or "sgd")
    nets = candidate["networks"]

    def fwd_bwd(network: str) -> tuple[float, float]:
        _, c, o = _network_seconds(nets[network], _input(candidate, network), batch_size, rates)
        return c, o

    def opt(*networks: str) -> float:
        params = sum(_parameters(candidate, n) for n in networks)
        return _optimizer_seconds(rates, optimizer, params, sum(_tensors(nets[n]) for n in networks))

    base = rates["step_seconds"]
    if family == "gan":
        gc, go = fwd_bwd("generator")
        dc, do = fwd_bwd("discriminator")
        compute = gc + 3 * dc
        other = go + 3 * do + opt("generator") + opt("discriminator") + 2 * base
    elif family == "vae":
        ec, eo = fwd_bwd("encoder")
        dc, do = fwd_bwd("decoder")
        latent = batch_size * int(candidate["io"]["latent_size"])
        compute = ec + dc
        other = eo + do + 8 * interpolate(rates["elementwise"], latent) + opt("encoder", "decoder") + base
    elif family in ("rbm", "dbn"):
        stack = "model" if family == "rbm" else "rbm"
        c, o = fwd_bwd(stack)
        compute = _CD1_SHARE * c
        other = 4 * o + opt(stack) + base
        if family == "dbn":
            cc, co = fwd_bwd("classifier")
            compute += c + cc
            other += o + co + opt(stack, "classifier") + base
    else:
        compute, other = fwd_bwd("model")
        other += opt("model") + base
    return StepCost(compute + other, compute, other)


def fastest_threads(candidate: dict[str, Any], *, batch_size: int, profile: DeviceProfile, cores: int) -> int:
    """The thread count (1..cores, among those profiled) the cost model predicts fastest: a small network
    runs slower on more threads, whose hand-offs cost more than they share."""
    counts = [int(t) for t in profile["threads"] if int(t) <= cores] or [1]
    return min(
        counts,
        key=lambda t: step_cost(candidate, batch_size=batch_size, threads=t, profile=profile).seconds,
    )
