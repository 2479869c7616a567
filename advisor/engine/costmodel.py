"""Seconds per training step from a device profile, over the family's real step.

The layers' forward + backward come from engine.layercost. The optimiser's step is read off its curve at
the parameter count, plus its cost per parameter tensor; each step adds the fixed cost of a step, and a
device's step factor multiplies the whole. The family's step decides what runs
(advisor/calibration/steps.py): a GAN trains the discriminator on real and fake images and then the generator
through it (G once, D three times, two optimiser steps); the VAE runs encoder and decoder; an RBM's CD-1 makes
five products of its weights without autograd; a DBN does CD-1 on every RBM and then one fine-tuning step.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast

from advisor.contract import Trainable
from advisor.engine.families import family_of, roles
from advisor.engine.families.family import (
    ADVERSARIAL,
    BACKPROP,
    CONTRASTIVE,
    LOSS_ELBO_GAUSSIAN,
    PRETRAINED,
    VARIATIONAL,
    Step,
)
from advisor.engine.layercost import (
    network_seconds,
    parameter_tensors,
)
from advisor.engine.layers import KINDS, kinds_in
from advisor.engine.profile import (
    PROFILE_VERSION,
    DeviceProfile,
    ThreadProfile,
    at_threads,
    interpolate,
)
from advisor.engine.wholesteps import (
    DECODER_FACTOR_STEPS,
    FACTOR_RANGE,
    FACTOR_STEPS,
    SMALL_STEP,
    SMALL_STEP_SPAN,
    WHOLE_STEPS,
)

_ADAM_LIKE = {"adam", "adamw", "rmsprop", "adagrad", "adadelta"}
# CD-1 (steps.cd1_gradients): three products forward-sized (up, down, up) and two outer products; the
# profile's Linear curve is forward + backward, three products
_CD1_SHARE = 5 / 3
# a loss's forward + backward over the values it reads, in passes of the element-wise curve (a ReLU's forward
# + backward of as many values): cross-entropy and MSE 1.3-1.8, binary cross-entropy 2.5-4 (0.8-11 M values;
# bench/results/generalise_amd-epyc-2c_build/README.md). A next-token model's cross-entropy over steps x
# vocabulary took a fifth of its step; the others are small beside their layers
LOSS_PASSES = {"cross_entropy": 1.5, "mse": 1.5, "bce": 3.5}
# a VAE's step beyond its networks, counted in calibration.steps._vae_step's forward (each op with its
# backward, a pass of the element-wise curve): over the code, the reparameterisation (chunk, noise, scale,
# exp, product, sum: 6) and the KL term (8); over the output, a Gaussian decoder's likelihood (9). At 8
# passes in all, the small vector VAEs of the build seed (0.6-0.7 ms a step) were priced 21-27% under: the
# launches of the ops left out (bench/results/curves_amd-epyc-2c_pool/README.md)
VAE_CODE_OPS = 14
GAUSSIAN_LIKELIHOOD_OPS = 9


@dataclass(frozen=True)
class StepCost:
    seconds: float
    compute: float  # seconds of products, convolutions and recurrent cells
    other: float  # element-wise layers, the optimiser and the step's fixed cost


def _optimizer_seconds(rates: ThreadProfile, optimizer: str, parameters: int, tensors: int) -> float:
    """Beyond the step's fixed cost, which includes a small SGD step (profile.step_seconds)."""
    name = "adam" if optimizer in _ADAM_LIKE else "sgd"
    floor = rates["optimizer"]["sgd"][0][1]
    return (
        max(0.0, interpolate(rates["optimizer"][name], parameters) - floor)
        + max(0, tensors - 2) * rates["optimizer_tensor_seconds"][name]
    )


def _parameters(candidate: Trainable, network: str) -> int:
    shape = roles.network_input(candidate, network)
    total = 0
    for item in candidate["networks"][network]:
        shape, params, _, _ = KINDS[item["kind"]].shape(item["args"], shape)
        total += params
    return total


class _Costing:
    """One candidate's networks at a batch on a profile: the moves every family's step is made of."""

    def __init__(self, candidate: Trainable, batch: int, rates: ThreadProfile) -> None:
        self.c, self.batch, self.rates = candidate, batch, rates
        self.nets = candidate["networks"]
        self.optimizer = str(candidate["training"].get("optimizer") or "sgd")
        self.base = rates["step_seconds"]
        self.outputs: dict[str, int] = {}  # values of each network's output, per example

    def fwd_bwd(self, network: str, input_grad: bool = False) -> tuple[float, float]:
        """A network's (compute, other) seconds; its input is data (no gradient) unless another network
        produced it under autograd."""
        shape = roles.network_input(self.c, network)
        out, c, o = network_seconds(self.nets[network], shape, self.batch, self.rates, input_grad)
        self.outputs[network] = math.prod(out)
        return c, o

    def loss(self, network: str, name: str) -> float:
        """The loss's forward + backward on a network's output (fwd_bwd walked it); its launch is in the
        step's fixed cost, so below the curve's smallest point only in proportion."""
        values = self.batch * self.outputs.get(network, 0)
        return LOSS_PASSES.get(name, 0.0) * interpolate(self.rates["elementwise"], values, launch=False)

    def input_grad_extra(self, network: str) -> float:
        """What its first layer with parameters adds when the network's input needs its gradient (walking
        that head alone: walking the whole network twice slowed recommend() by a tenth)."""
        layers, shape = self.nets[network], roles.network_input(self.c, network)
        for k, item in enumerate(layers):
            if parameter_tensors([item]) > 0:
                head = layers[: k + 1]
                with_grad = network_seconds(head, shape, self.batch, self.rates, True)[1]
                return with_grad - network_seconds(head, shape, self.batch, self.rates, False)[1]
        return 0.0

    def opt(self, *networks: str) -> float:
        params = sum(_parameters(self.c, n) for n in networks)
        tensors = sum(parameter_tensors(self.nets[n]) for n in networks)
        return _optimizer_seconds(self.rates, self.optimizer, params, tensors)


def _backprop(s: _Costing) -> tuple[float, float]:
    compute, other = s.fwd_bwd(roles.MODEL)
    loss = str(s.c["training"].get("loss") or "")
    other += s.loss(roles.MODEL, loss) + s.opt(roles.MODEL) + s.base
    return compute, other


def _adversarial(s: _Costing) -> tuple[float, float]:
    gc, go = s.fwd_bwd(roles.GENERATOR)
    dc, do = s.fwd_bwd(roles.DISCRIMINATOR)  # on the real and the detached fake images
    # and on the fake ones, back into the generator
    compute = gc + 3 * dc + s.input_grad_extra(roles.DISCRIMINATOR)
    return compute, go + 3 * do + s.opt(roles.GENERATOR) + s.opt(roles.DISCRIMINATOR) + 2 * s.base


def _variational(s: _Costing) -> tuple[float, float]:
    ec, eo = s.fwd_bwd(roles.ENCODER)
    dc, do = s.fwd_bwd(roles.DECODER, input_grad=True)  # from the reparameterised sample
    latent = s.batch * roles.network_input(s.c, roles.DECODER)[0]  # the latent code: the decoder's input
    # the step's own element-wise ops over the code (calibration.steps._vae_step), each with its backward
    sample = VAE_CODE_OPS * interpolate(s.rates["elementwise"], latent)
    decoder = s.nets[roles.DECODER]
    if s.c["training"].get("loss") == LOSS_ELBO_GAUSSIAN:  # the Gaussian likelihood's ops over the output
        values = s.batch * s.outputs.get(roles.DECODER, 0)
        loss = GAUSSIAN_LIKELIHOOD_OPS * interpolate(s.rates["elementwise"], values)
    else:  # the reconstruction's loss: binary cross-entropy behind a sigmoid, else MSE (calibration.steps)
        loss = s.loss(roles.DECODER, "bce" if decoder and decoder[-1]["kind"] == "Sigmoid" else "mse")
    return ec + dc, eo + do + sample + loss + s.opt(roles.ENCODER, roles.DECODER) + s.base


def _cd1(s: _Costing, stack: str) -> tuple[float, float, float, float]:
    """CD-1 on every RBM of `stack`: its (compute, other) seconds, and the stack's forward + backward."""
    c, o = s.fwd_bwd(stack, input_grad=True)  # CD-1: products counted by _CD1_SHARE, no autograd
    return _CD1_SHARE * c, 4 * o + s.opt(stack) + s.base, c, o


def _contrastive(s: _Costing) -> tuple[float, float]:
    compute, other, _, _ = _cd1(s, roles.MODEL)
    return compute, other


def _pretrained(s: _Costing) -> tuple[float, float]:
    """CD-1 on the stack, then one fine-tuning step through it and the classifier from the data."""
    compute, other, c, o = _cd1(s, roles.STACK)
    cc, co = s.fwd_bwd(roles.CLASSIFIER, input_grad=True)
    compute += c - s.input_grad_extra(roles.STACK) + cc
    other += o + co + s.opt(roles.STACK, roles.CLASSIFIER) + s.base
    return compute, other


# each way of training (families/family.py) as advisor/calibration/steps.py runs it: (compute, other)
_STEPS: dict[Step, Callable[[_Costing], tuple[float, float]]] = {
    BACKPROP: _backprop,
    ADVERSARIAL: _adversarial,
    VARIATIONAL: _variational,
    CONTRASTIVE: _contrastive,
    PRETRAINED: _pretrained,
}


_PUBLISHED: dict[tuple[Any, ...], StepCost] = {}


def step_cost(candidate: Trainable, *, batch_size: int, threads: int, profile: DeviceProfile) -> StepCost:
    """Seconds of one training step of `candidate` at `batch_size` and `threads` on the profiled device."""
    return priced(candidate, batch_size=batch_size, threads=threads, profile=profile)[0]


def priced(
    candidate: Trainable, *, batch_size: int, threads: int, profile: DeviceProfile
) -> tuple[StepCost, list[StepCost]]:
    """The step's price, and each member's own price where the profile is merged from several
    (engine.profile.merge, its `members`; empty for a single profile), for the interval to span.

    A merged profile prices the step as the median of the members' own prices: the price of their pointwise
    median mixed one profile's small points with another's whole steps, and its step factor with them, so
    that it fell outside every member's price (on the Intel Xeon's seed 24014 -29% where the members were
    -18% to +13%; on seed 24013 the autoencoders +38% against -2% to +34%:
    bench/results/generalise_intel-xeon-2c_evaluation-11/README.md)."""
    members = [m for m in profile.get("members") or [] if str(threads) in m["threads"]]
    if len(members) >= 2:
        each = [_single_cost(candidate, batch_size, threads, m) for m in members]
        return _median_cost(each), each
    return _single_cost(candidate, batch_size, threads, profile), []


def _single_cost(candidate: Trainable, batch_size: int, threads: int, profile: DeviceProfile) -> StepCost:
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


def _median_cost(each: list[StepCost]) -> StepCost:
    """The median of several prices of one step (the mean of the two middle ones for an even count)."""
    ordered = sorted(each, key=lambda c: c.seconds)
    low, high = ordered[(len(ordered) - 1) // 2], ordered[len(ordered) // 2]
    return StepCost(
        (low.seconds + high.seconds) / 2, (low.compute + high.compute) / 2, (low.other + high.other) / 2
    )


def _step_cost(
    candidate: Trainable,
    batch_size: int,
    threads: int,
    profile: DeviceProfile,
    *,
    with_factor: bool = True,
) -> StepCost:
    rates = at_threads(profile, threads)
    compute, other = _STEPS[family_of(candidate).step](_Costing(candidate, batch_size, rates))
    factor = factor_of(profile, candidate, compute + other) if with_factor else 1.0
    return StepCost(factor * (compute + other), factor * compute, factor * other)


def factor_of(
    profile: DeviceProfile, candidate: Trainable | None = None, modelled: float | None = None
) -> float:
    """What multiplies every modelled step on this device: what whole steps cost beyond their layers timed
    alone (the profile's `step_factor`), the fewest threads' at every count; for a candidate with a transposed
    convolution on a CPU, times the square root of the CNN's whole step's ratio to it (`decoder_step_factor`,
    wholesteps.DECODER_FACTOR_STEPS: why there). The whole
    steps are tiny networks of 1-3 ms, and at 2 threads their hand-offs swung from one profiling to the next
    (0.8x to 1.5x of the 1-thread factor within minutes), scaling every 2-thread estimate with them while the
    networks' measured speed-ups held at 1.2-1.4x. Each count's layer points carry its speed-up; what a sum of
    layers misses is the same at any count
    (bench/results/generalise_amd-epyc-2c_factor-per-count/README.md).

    On a CPU, a step whose `modelled` seconds (its sum, no factor) come near the small MLP's takes half that
    step's excess over the factor, in log, fading to none at wholesteps.SMALL_STEP_SPAN x its seconds
    (`small_step_factor`, `small_step_modelled`: why there)."""
    fewest = at_threads(profile, 1)  # the nearest profiled count to 1: the fewest
    factor = fewest.get("step_factor", 1.0)
    if profile.get("kind") == "cuda":
        return factor
    sized = factor
    small, anchor = fewest.get("small_step_factor"), fewest.get("small_step_modelled")
    if modelled is not None and small is not None and anchor:
        reach = math.log(max(modelled, 1e-12) / anchor) / math.log(SMALL_STEP_SPAN)
        near = 1.0 - min(1.0, max(0.0, reach))  # 1 at the small step's seconds and below, 0 past the span
        sized = factor * math.sqrt(small / factor) ** near
    decoder = fewest.get("decoder_step_factor")
    if decoder is None or candidate is None or "ConvTranspose2d" not in kinds_in(candidate):
        return sized
    return sized * math.sqrt(decoder / factor)


def step_factor(rates: ThreadProfile, steps: tuple[int, ...] = FACTOR_STEPS) -> float:
    """Measured / modelled seconds (without a factor) of the profile's whole `steps` (default
    wholesteps.FACTOR_STEPS), clamped to FACTOR_RANGE; the stored factor where the profile kept no whole-step
    seconds (version < 3)."""
    measured = rates.get("whole_step_seconds")
    if not measured:
        return rates.get("step_factor", 1.0)
    ratios = []
    # a profile from before a step was added (version < 9) has only the first ones: its first one stands in
    for i in sorted({i if i < len(measured) else 0 for i in steps}):
        ratios.append(measured[i] / _whole_step_modelled(rates, i))
    return _clamped(statistics.median(ratios))


def _clamped(ratio: float) -> float:
    low, high = FACTOR_RANGE
    return min(high, max(low, ratio))


def _whole_step_modelled(rates: ThreadProfile, index: int) -> float:
    """Today's model's seconds of wholesteps.WHOLE_STEPS[index] on these rates, without a factor."""
    profile: DeviceProfile = {
        "version": PROFILE_VERSION,
        "kind": "",
        "processor": "",
        "torch": "",
        "threads": {"1": rates},
        "copy_bandwidth": None,
        "allocator": "",
        "profiled_at": "",
        "seconds": 0.0,
    }
    c = WHOLE_STEPS[index]
    # a whole step's candidate gives only what a step reads of its training (wholesteps.candidate)
    step = cast(Trainable, c)
    return _step_cost(step, int(c["training"]["batch_size"]), 1, profile, with_factor=False).seconds


def with_current_factor(profile: DeviceProfile) -> DeviceProfile:
    """The profile with each thread count's step factor derived by today's cost model from the whole-step
    seconds it stored: a factor is the ratio to the model that set it, stale once the model changes. A merged
    profile's members too: a step is priced as the median of their prices (`priced`)."""
    threads = {t: with_factors(r) for t, r in profile["threads"].items()}
    if "members" not in profile:
        return {**profile, "threads": threads}
    return {**profile, "threads": threads, "members": [with_current_factor(m) for m in profile["members"]]}


def with_factors(rates: ThreadProfile) -> ThreadProfile:
    """A thread count's rates with the factors its whole-step seconds give today's cost model (factor_of
    reads them)."""
    found = ThreadProfile(**rates)
    found["step_factor"] = step_factor(rates)
    measured = rates.get("whole_step_seconds")
    if measured:
        found["decoder_step_factor"] = step_factor(rates, DECODER_FACTOR_STEPS)
    # a profile from before the wide MLP (version < 9) has the small MLP's alone, which sets its factor
    if measured and len(measured) > max(FACTOR_STEPS):
        modelled = _whole_step_modelled(rates, SMALL_STEP)  # once: its factor and where it applies
        found["small_step_factor"] = _clamped(measured[SMALL_STEP] / modelled)
        found["small_step_modelled"] = modelled
    return found


def fastest_threads(candidate: Trainable, *, batch_size: int, profile: DeviceProfile, cores: int) -> int:
    """The thread count (1..cores, among those profiled) the cost model predicts fastest: a small network
    runs slower on more threads, whose hand-offs cost more than they share."""
    counts = [int(t) for t in profile["threads"] if int(t) <= cores] or [1]
    return min(
        counts,
        key=lambda t: step_cost(candidate, batch_size=batch_size, threads=t, profile=profile).seconds,
    )
