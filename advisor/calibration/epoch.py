"""From a measured step to an epoch, and a real epoch of training to check the prediction against.

Prediction: seconds per batch x batches per epoch, where a last, partial batch counts in proportion to its
size (a step's time grows about linearly with the batch once the batch is not tiny). Time to train is that
times the epochs (docs/ARCHITECTURE.md, methodology). A calibration predicts from measure()'s
`trimmed_mean_seconds_per_batch` plus gathering (engine.robust.headline_step): an epoch pays for the steps
slower than the median, which the median leaves out, but not for one stall that a short measurement caught.
"""

from __future__ import annotations

import resource
import time
from collections.abc import Callable, Mapping
from typing import Any

import torch

from advisor.calibration.steps import make_step

GATHER_CAP_BYTES = 64 * 2**20


def predicted_epoch_seconds(seconds_per_batch: float, examples: int, batch_size: int) -> float:
    full, rest = divmod(int(examples), int(batch_size))
    return float(seconds_per_batch) * (full + rest / batch_size)


def predicted_training_seconds(
    seconds_per_batch: float, examples: int, batch_size: int, epochs: int
) -> float:
    return predicted_epoch_seconds(seconds_per_batch, examples, batch_size) * int(epochs)


def loading_seconds_per_batch(
    candidate: Mapping[str, Any],
    *,
    batch_size: int,
    examples: int,
    threads: int | None = None,
    device: str = "cpu",
    batches: int = 200,
    cap_bytes: int = GATHER_CAP_BYTES,
    max_seconds: float | None = None,
    clock: Callable[[], float] = time.perf_counter,
) -> float:
    """Seconds to gather one shuffled mini-batch from an in-memory data set, as train_one_epoch does: the
    input pipeline's share of a real step, which measure()'s fixed synthetic batch leaves out (Shi et al. time
    synthetic data too). The data set is capped at 65,536 examples and `cap_bytes` (64 MiB): enough to fall
    out of the CPU's caches without making a calibration hold a copy of a large data set. With
    `max_seconds` (a sweep's configuration that stalled: child.STALL_FACTOR), no gather starts after that
    long: beside busy processes each 2-thread gather can stall for a scheduler's slice, and 200 of them for
    seconds. `clock` times the gathers (a test injects a synthetic one)."""
    dev = torch.device(device)
    step = make_step(candidate, dev)
    per_example = sum(t.element_size() * t[0].numel() for t in step.make_batch(1))
    cap = max(1, int(cap_bytes) // max(1, per_example))
    n = max(int(batch_size), min(int(examples), 65536, cap))
    data = step.make_batch(n)  # tensors [n, ...]
    order = torch.randperm(n, device=dev)
    count = max(1, min(int(batches), n // int(batch_size)))
    previous = torch.get_num_threads()
    if threads:
        torch.set_num_threads(int(threads))  # gathering is an intra-op parallel kernel too
    try:
        # one gather first: its kernel's first call (a CUDA module load, ~10 ms) is not a batch's cost
        gathered = tuple(t[order[:batch_size]] for t in data)
        if dev.type == "cuda":
            torch.cuda.synchronize(dev)
        start, done = clock(), 0
        for i in range(count):
            index = order[i * batch_size : (i + 1) * batch_size]
            gathered = tuple(t[index] for t in data)
            done += 1
            if max_seconds is not None and clock() - start >= max_seconds:
                break
        if dev.type == "cuda":
            torch.cuda.synchronize(dev)
        seconds = clock() - start
    finally:
        torch.set_num_threads(previous)
    del gathered
    return seconds / done


def train_one_epoch(
    candidate: Mapping[str, Any],
    *,
    examples: int,
    batch_size: int,
    threads: int | None = None,
    device: str = "cpu",
    warmup: int = 2,
) -> dict[str, Any]:
    """Really train one epoch over an in-memory data set of `examples` synthetic examples.

    Each epoch shuffles the data and gathers every mini-batch by index, as an in-memory data loader does; the
    last batch may be partial. `warmup` steps on the first batch run before the clock starts (like measure()),
    so one-off start-up costs (first-call initialisation) are not charged to the epoch.
    """
    previous = torch.get_num_threads()
    if threads:
        torch.set_num_threads(int(threads))
    try:
        dev = torch.device(device)
        step = make_step(candidate, dev)
        data = step.make_batch(int(examples))  # the whole data set: tensors [N, ...]
        first = tuple(t[:batch_size] for t in data)
        for _ in range(warmup):
            step.run(first)
        if dev.type == "cuda":
            torch.cuda.synchronize(dev)
        before = resource.getrusage(resource.RUSAGE_SELF)
        start = time.perf_counter()
        order = torch.randperm(int(examples), device=dev)
        batches = 0
        for i in range(0, int(examples), int(batch_size)):
            index = order[i : i + batch_size]
            step.run(tuple(t[index] for t in data))
            batches += 1
        if dev.type == "cuda":
            torch.cuda.synchronize(dev)
        seconds = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_SELF)
    finally:
        torch.set_num_threads(previous)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {
        "seconds": seconds,
        "cpu_seconds": cpu,  # user + system of this process: what the epoch cost, whatever else ran
        "batches": batches,
        "examples": int(examples),
        "batch_size": int(batch_size),
    }
