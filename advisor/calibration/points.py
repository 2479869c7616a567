"""How one point of a device profile is timed (advisor/calibration/profile.py takes the points): the median
of repeated runs after a warm-up, each a layer's forward + backward, an optimiser step or the harness's own
step; every thread count timed next to the others (`Interleaved`); and the weight's own work of a product,
read off two batches of one product.
"""

from __future__ import annotations

import math
import os
import statistics
import time
from collections.abc import Callable
from contextvars import ContextVar
from typing import Any

import torch
from torch import nn

from advisor.calibration.contention import Probe

# On a GPU the host queues kernels ahead of the device, so inside a step a layer costs the longer of its
# launches and its kernels, not launches + kernels + a synchronisation: a point is timed over this many
# back-to-back calls per synchronisation (the whole steps keep one per step, as measure() does)
CUDA_PIPELINE = 8


# per measured point: enough repetitions for a stable median on a noisy VM. At 0.06 s (and 0.3 s whole
# steps) six profiles of one quiet machine gave the grid of `bench predict` a median error of 15-32% and a
# thread choice within 5% of the best in 45-85% of configurations; at 2.5 times as long, 15-27% and 67-82%,
# scored on the same measured grids (bench/results/predict_amd-epyc-2c_ab-point-length/README.md), for 15-17 s
# instead of 7-9 s
POINT_SECONDS = 0.15


def profile_scale() -> float:
    """What multiplies the profile's timing lengths (its points' and its whole steps'): ADVISOR_PROFILE_SCALE,
    else 1. The test suite profiles at a quarter of the length: its profiles are checked for what they hold,
    never for how well they predict, and six of them took about 280 s of a CI run on a 2-core VM."""
    raw = os.environ.get("ADVISOR_PROFILE_SCALE", "")
    try:
        scale = float(raw) if raw else 1.0
    except ValueError:
        scale = math.nan
    if not 0 < scale <= 1:
        raise ValueError(f"ADVISOR_PROFILE_SCALE must be a number in (0, 1], not {raw!r}")
    return scale


# When the profile must be done by (time.perf_counter()). A worker waits PROFILE_TIMEOUT for its first
# profile; with a CPU-bound process beside a test run the points' usual runs outlasted 300 s here, and the
# worker then started with no profile at all. Past this moment every remaining point is timed once after one
# warm run: the profile ends in time, says that it hurried, and is untrusted (the worker profiles again
# sooner).
DEADLINE: ContextVar[float] = ContextVar("profile_deadline", default=math.inf)


def calls_per_sync(dev: torch.device) -> int:
    return CUDA_PIPELINE if dev.type == "cuda" else 1


def median_seconds(
    run: Callable[[], None], sync: Callable[[], None], budget: float | None = None, repeat: int = 1
) -> float:
    """Median seconds of one `run()`, timed for `budget` seconds (POINT_SECONDS by default, times
    profile_scale()); each timed sample is `repeat` runs and one synchronisation."""
    if budget is None:
        budget = POINT_SECONDS * profile_scale()
    if repeat > 1:
        once = run

        def run() -> None:
            for _ in range(repeat):
                once()

    first = time.perf_counter()
    run()
    sync()
    # a slow point (a large convolution: 70 ms here) needs fewer runs for a stable median
    fewest = 3 if time.perf_counter() - first > budget / 3 else 5
    if first > DEADLINE.get():
        fewest, budget = 1, 0.0
    else:
        run()
        sync()
    times: list[float] = []
    start = time.perf_counter()
    while len(times) < fewest or (time.perf_counter() - start < budget and len(times) < 2000):
        t0 = time.perf_counter()
        run()
        sync()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) / repeat


def fwd_bwd(module: nn.Module, x: torch.Tensor, sync: Callable[[], None], repeat: int = 1) -> float:
    def run() -> None:
        out = module(x)
        if isinstance(out, tuple):
            out = out[0]
        out.sum().backward()

    return median_seconds(run, sync, repeat=repeat)


def stage(batch: int, channels: int, side: int, dev: torch.device) -> torch.Tensor:
    """What a max-pool reads in a CNN: a 3x3 convolution's rectified output of the harness's uniform batch.
    A max-pool's speed depends on its data (its comparisons branch): on uniform noise it took 1.2-1.3x its
    time on such a stage, and 3x its time on constant or sorted values."""
    with torch.no_grad():
        x = torch.relu(
            nn.Conv2d(3, channels, 3, padding=1).to(dev)(torch.rand(batch, 3, side, side, device=dev))
        )
    return x.requires_grad_()


def harness_step(
    candidate: dict[str, Any], dev: torch.device, sync: Callable[[], None], budget: float | None = None
) -> float:
    """Median seconds of the calibration harness's own step, a fresh batch each time as calibrations draw."""
    from advisor.calibration.steps import make_step

    step = make_step(candidate, dev)
    batch_size = int(candidate["training"]["batch_size"])
    batches = [step.make_batch(batch_size) for _ in range(4)]
    turn = iter(range(1 << 30))
    return median_seconds(lambda: step.run(batches[next(turn) % 4]), sync, budget)


def optimizer_seconds(
    name: str, tensors: int, parameters: int, dev: torch.device, sync: Callable[[], None], repeat: int = 1
) -> float:
    size = max(1, parameters // tensors)
    params = [nn.Parameter(torch.rand(size, device=dev)) for _ in range(tensors)]
    for p in params:
        p.grad = torch.rand_like(p)
    opt: torch.optim.Optimizer
    if name == "adam":
        opt = torch.optim.Adam(params, lr=1e-3)
    else:
        opt = torch.optim.SGD(params, lr=1e-3, momentum=0.9)
    return median_seconds(opt.step, sync, repeat=repeat)


def weight_work(thin: float, thick: float, thin_batch: int, thick_batch: int) -> float:
    """FLOPs a weight costs, from one product at two batches: thin / thick = (2 b1 + k) / (2 b2 + k) per
    weight, clamped to 0..b2 / 2 (measured 40-64 on a 2-core EPYC; a busy machine's 2-thread points gave
    thousands); 0 where the thin one measured no faster than the thick one (a burst of other work: the
    median of a device's profiles takes it out)."""
    ratio = thin / thick if thick > 0 else 1.0
    if ratio >= 1.0:
        return 0.0
    return min(thick_batch / 2, max(0.0, (2 * thick_batch * ratio - 2 * thin_batch) / (1.0 - ratio)))


def product_work(shape: tuple[int, int, int], kappa: float) -> float:
    """A (batch, in, out) product's work on the linear curve: its FLOPs plus kappa x its weights (bias in)."""
    b, i, o = shape
    return 2.0 * b * i * o + kappa * (i * o + o)


class Interleaved:
    """Runs a measurement at every thread count back to back, the order reversed from one point to the next.

    The thread counts were profiled one after the other, 10 s apart, and a shared machine's load moves in
    that time: one count's points taken under more load made every 2-thread prediction of a run slower (or
    faster) than the 1-thread one, and the plan picked the wrong count for 10 to 20 of 60 configurations of
    `bench predict` in some runs (bench/results/predict_amd-epyc-2c_ab-sequential-vs-interleaved/README.md).
    Measured next to each other, in ABBA order so
    that a steady drift cancels, both counts see the same machine, and the choice between them is a
    comparison of like with like."""

    def __init__(self, counts: list[int], cpu: bool, probe: Probe | None = None) -> None:
        self.counts, self.cpu, self.flip, self.probe = counts, cpu, False, probe

    def __call__(self, run: Callable[[], float]) -> dict[int, float]:
        order = self.counts[::-1] if self.flip else self.counts
        self.flip = not self.flip
        seconds: dict[int, float] = {}
        for count in order:
            if self.cpu:
                torch.set_num_threads(count)
            seconds[count] = run()
            if self.probe is not None:  # what else ran on the device, between points
                self.probe.tick()
        return seconds
