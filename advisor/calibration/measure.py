"""`measure()`: time whole training steps of one candidate at one batch size and thread count.

Method (docs/ARCHITECTURE.md, methodology): synthetic data of the candidate's shapes is made on the
device and given new values before each step's clock starts (an epoch brings new data every step); `warmup`
steps are run and discarded; then whole steps (forward, loss, backward, optimiser step) are timed one by one,
at least `min_iterations` and `min_seconds`, then until the median's 90% interval (order statistics) is within
±5% of it or the configuration's time runs out (StoppingRule). We report the median and the IQR of the
per-step times (flagged noisy when IQR/median > 10%: descriptive), never a single run, and what could be seen
of other work on the device meanwhile (contention.py); a configuration whose median stayed imprecise or
that ran under contention is `unreliable`, with its reasons. On CUDA each step is bracketed by CUDA events
(the host never waits inside the timed loop, so launch overhead is not inflated) and the device is
synchronised before and after the loop. User/system CPU time and page faults come from getrusage over the
timed loop, per step, less what refilling the batch cost: system time and minor faults expose an allocator
that returns memory to the OS every step.
"""

from __future__ import annotations

import contextlib
import math
import resource
import statistics
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypedDict

import torch

from advisor.calibration.allocator import current_allocator
from advisor.calibration.contention import Probe, judge
from advisor.calibration.memory import (
    live_tensor_peak,
    peak_rss_bytes,
    release_free_memory,
    reset_peak_rss,
    rss_bytes,
    total_ram_bytes,
)
from advisor.calibration.steps import Batch, TrainingStep, make_step
from advisor.contract import Contention, Measurement
from advisor.engine.robust import PRECISION, median_interval, relative_halfwidth, trimmed_mean

NOISY_IQR_FRACTION = 0.10  # `noisy`: descriptive only (what acts is `unreliable`, docs/CONTRACT.md)
MAX_SECONDS_FACTOR = 6  # measure() alone times a configuration for at most this many times min_seconds
# a sweep's configuration that stalled (2 threads beside two busy processes on 2 cores: 5 s steps where one
# thread took 33 ms) stops once its timing has run `cut_after_s` with this many steps, the median of three,
# unreliable for its interval (bench/results/queue_amd-epyc-2c_forecast-loaded/)
FEWEST_AT_LIMIT = 3


def is_out_of_memory(exc: BaseException) -> bool:
    if isinstance(exc, MemoryError | torch.cuda.OutOfMemoryError):
        return True
    text = str(exc)
    return isinstance(exc, RuntimeError) and (
        "can't allocate memory" in text or "not enough memory" in text or "out of memory" in text.lower()
    )


def _device_name(dev: torch.device) -> str:
    if dev.type == "cuda":
        return f"cuda:{dev.index if dev.index is not None else torch.cuda.current_device()}"
    return dev.type


def _capacity_bytes(dev: torch.device, memory_limit_bytes: int | None) -> int:
    if memory_limit_bytes:
        return int(memory_limit_bytes)
    if dev.type == "cuda":
        return int(torch.cuda.get_device_properties(dev).total_memory)
    return total_ram_bytes()


def _event() -> torch.cuda.Event:
    return torch.cuda.Event(enable_timing=True)


_USAGE_FIELDS = ("ru_utime", "ru_stime", "ru_minflt", "ru_majflt")


def _usage() -> tuple[float, ...]:
    now = resource.getrusage(resource.RUSAGE_SELF)
    return tuple(float(getattr(now, f)) for f in _USAGE_FIELDS)


@dataclass
class StoppingRule:
    """When to stop timing one configuration: after `min_iterations` steps and `min_seconds`, once the
    median's CONFIDENCE interval (order statistics, engine.robust) is within ±`precision` of the median, or
    at `max_seconds` (the configuration's share of the job's time), whichever comes first. The interval is
    checked at steps growing by a quarter (sorting every step would cost O(n^2) on fast steps)."""

    min_iterations: int
    min_seconds: float
    max_seconds: float
    precision: float = PRECISION
    # past this many seconds, FEWEST_AT_LIMIT steps are enough even below min_iterations; None: never
    cut_after_s: float | None = None
    next_check: int = 0
    stopped: str = ""  # "precise" or "time": why timing stopped

    def enough(self, elapsed: float) -> int:
        """The fewest steps it takes, `elapsed` seconds into the timing."""
        if self.cut_after_s is not None and elapsed >= self.cut_after_s:
            return min(self.min_iterations, FEWEST_AT_LIMIT)
        return self.min_iterations

    def fewest_left(self, count: int, elapsed: float, step_s: float) -> int:
        """The fewest further steps before it can stop, each taking `step_s`: a lower bound (past the
        minimums it goes on until the interval is narrow or the time is up)."""
        n = 0
        while n < self.min_iterations + 1 and (
            count + n < self.enough(elapsed + n * step_s) or elapsed + n * step_s < self.min_seconds
        ):
            n += 1
        if elapsed + n * step_s < self.min_seconds:  # steps too short to count: the seconds decide
            n = max(n, math.ceil((self.min_seconds - elapsed) / max(step_s, 1e-9)))
        return n

    def done(self, count: int, elapsed: float, samples: Callable[[], list[float]]) -> bool:
        if count < self.enough(elapsed) or elapsed < self.min_seconds:
            return False
        if elapsed >= self.max_seconds:
            self.stopped = "time"
            return True
        if count < self.next_check:
            return False
        self.next_check = max(count + 1, math.ceil(count * 1.25))
        if relative_halfwidth(samples()) <= self.precision:
            self.stopped = "precise"
            return True
        return False


def time_steps(
    run: Callable[[Batch], None],
    batch: Batch,
    dev: torch.device,
    *,
    min_iterations: int,
    min_seconds: float,
    warmup: int,
    refill: Callable[[], None] | None = None,
    max_seconds: float | None = None,
    precision: float = PRECISION,
    clock: Callable[[], float] = time.perf_counter,
    probe: Probe | None = None,
    cut_after_s: float | None = None,
    on_step: Callable[[float, int], None] | None = None,
) -> StepTimes:
    """The timing loop: per-step seconds plus rusage deltas per step, timed until StoppingRule says so
    (`max_seconds` None: at the minimums, the interval only reported). `cut_after_s` bounds the warm-up
    too: no warm-up step starts after it, the first one always does. `on_step(seconds, left)` hears of each
    step on a CPU, warm-up ones included, with the fewest steps still to come were each as long (a sweep's
    remaining time reads a slow configuration's own progress).

    With `refill`, every step trains on new values in the batch's memory (steps.Draw),
    drawn before its clock starts; their CPU time and faults are left out of the per-step figures. `clock`
    times the steps on a CPU (a test injects a synthetic one); `probe` samples the machine between steps."""
    rule = StoppingRule(
        min_iterations,
        min_seconds,
        min_seconds if max_seconds is None else max_seconds,
        precision,
        None if max_seconds is None else cut_after_s,
    )
    cuda = dev.type == "cuda"
    tick = None if cuda else on_step  # on CUDA the host's clock times a launch, not the step
    warmed, began = 0, clock()
    while warmed < warmup:
        if warmed and cut_after_s is not None and clock() - began >= cut_after_s:
            break
        if refill is not None:
            refill()
        t0 = clock()
        run(batch)
        warmed += 1
        if tick is not None:
            now = clock()
            seconds, spent = now - t0, now - began
            more = warmup - warmed
            if cut_after_s is not None:  # those that would start before the cut
                more = min(more, max(0, math.ceil((cut_after_s - spent) / max(seconds, 1e-9))))
            tick(seconds, more + rule.fewest_left(0, 0.0, seconds))
    if cuda:
        torch.cuda.synchronize(dev)
    host: list[float] = []
    events: list[tuple[torch.cuda.Event, torch.cuda.Event]] = []

    def so_far() -> list[float]:
        if not cuda:
            return host
        torch.cuda.synchronize(dev)  # between steps, outside any timed pair
        return [a.elapsed_time(b) / 1000.0 for a, b in events]

    making = [0.0] * len(_USAGE_FIELDS)  # what refilling cost, taken off the loop's usage
    if probe is not None:
        probe.start()
    before = _usage()
    start = clock()
    while True:
        if refill is not None:
            u0 = _usage()
            refill()
            making = [m + b - a for m, a, b in zip(making, u0, _usage(), strict=True)]
        if cuda:
            pair = (_event(), _event())
            pair[0].record()
            run(batch)
            pair[1].record()
            events.append(pair)
            now = clock()
        else:
            t0 = clock()
            run(batch)
            now = clock()
            host.append(now - t0)
        if probe is not None:
            probe.tick()
        count = len(events) if cuda else len(host)
        stop = rule.done(count, now - start, so_far)
        if tick is not None:
            tick(host[-1], 0 if stop else rule.fewest_left(count, now - start, host[-1]))
        if stop:
            break
    if cuda:
        torch.cuda.synchronize(dev)
        host = [a.elapsed_time(b) / 1000.0 for a, b in events]
    user, system, minor, major = (b - a - m for a, b, m in zip(before, _usage(), making, strict=True))
    n = len(host)
    timed = sum(host)
    contention = None
    if probe is not None:
        cpu = None if cuda else user + system
        contention = probe.finish(cpu_seconds=cpu, timed_seconds=timed, threads=torch.get_num_threads())
    interval = median_interval(host)
    halfwidth = relative_halfwidth(host)
    return {
        "samples": host,
        "user_seconds_per_step": user / n,
        "system_seconds_per_step": system / n,
        "minor_faults_per_step": minor / n,
        "major_faults_per_step": major / n,
        "median_interval": list(interval) if interval else None,
        "interval_halfwidth": halfwidth if math.isfinite(halfwidth) else None,  # None: too few steps
        "stopped": "minimum" if max_seconds is None else rule.stopped,
        "contention": contention,
        "warmed": warmed,
    }


def _one_step(step: TrainingStep, batch: Batch) -> None:
    step.refill(batch)
    step.run(batch)


def summarise_samples(samples: list[float]) -> tuple[float, float]:
    """Median and interquartile range of per-step seconds."""
    median = statistics.median(samples)
    if len(samples) < 2:
        return median, 0.0
    q1, _, q3 = statistics.quantiles(samples, n=4, method="inclusive")
    return median, q3 - q1


class StepTimes(TypedDict):
    """time_steps()'s figures: every timed step's seconds, and the process's usage per step."""

    samples: list[float]
    user_seconds_per_step: float
    system_seconds_per_step: float
    minor_faults_per_step: float
    major_faults_per_step: float
    median_interval: list[float] | None
    interval_halfwidth: float | None  # None: too few steps
    stopped: str
    contention: Contention | None
    warmed: int  # warm-up steps run: fewer than asked where the configuration stalled (cut_after_s)


def measure(
    candidate: Mapping[str, Any],
    *,
    device: str = "cpu",
    batch_size: int,
    threads: int | None = None,
    min_iterations: int = 5,
    min_seconds: float = 1.0,
    warmup: int = 2,
    memory_limit_bytes: int | None = None,
    max_seconds: float | None = None,
    precision: float = PRECISION,
    cut_after_s: float | None = None,
    on_step: Callable[[float, int], None] | None = None,
) -> Measurement:
    """One measured configuration (docs/CONTRACT.md, Python entry points).

    Steps are timed until the median is known within ±`precision` (StoppingRule), for at most `max_seconds`
    (default MAX_SECONDS_FACTOR x min_seconds; a sweep passes the configuration's share of the job's time,
    and `cut_after_s`, past which a configuration that stalled stops with FEWEST_AT_LIMIT steps;
    `on_step(seconds, left)`: each step on a CPU, with the fewest still to come, the tracked one included);
    a configuration whose median stayed imprecise, or during which other work was seen on the device
    (contention.py), is `unreliable`, with its reasons. Out of memory is a result (status "oom"), not an
    exception. `memory_limit_bytes` only names the capacity in that message; the cap itself is enforced by
    the job's child process (runner.py).
    """
    dev = torch.device(device)
    previous_threads = torch.get_num_threads()
    if threads:
        torch.set_num_threads(int(threads))
    used_threads = torch.get_num_threads()
    release_free_memory()
    if dev.type == "cuda":
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats(dev)
        base = torch.cuda.memory_allocated(dev)
        base_reserved = torch.cuda.memory_reserved(dev)
    else:
        base = rss_bytes()
    hwm_reset = dev.type == "cpu" and reset_peak_rss()
    oom_text = ""
    info: _StepInfo | None = None
    # CUDA events and the allocator's statistics follow the current device: make it this one.
    device_scope = torch.cuda.device(dev) if dev.type == "cuda" else contextlib.nullcontext()
    with device_scope:
        try:
            step = make_step(candidate, dev)
            info = _step_info(step)
            batch = step.make_batch(int(batch_size))
            timing = time_steps(
                step.run,
                batch,
                dev,
                min_iterations=min_iterations,
                min_seconds=min_seconds,
                warmup=warmup,
                refill=lambda: step.refill(batch),
                max_seconds=max(
                    min_seconds, MAX_SECONDS_FACTOR * min_seconds if max_seconds is None else max_seconds
                ),
                precision=precision,
                probe=Probe(cuda_index=dev.index if dev.type == "cuda" else None),
                cut_after_s=cut_after_s,
                # and one more step after the timing: the tracked one (live_tensor_peak)
                on_step=None if on_step is None else lambda seconds, left: on_step(seconds, left + 1),
            )
            rss_growth = reserved = None
            if dev.type == "cuda":
                peak = torch.cuda.max_memory_allocated(dev) - base
                reserved = torch.cuda.max_memory_reserved(dev) - base_reserved
            else:
                hwm = peak_rss_bytes() if hwm_reset else None
                peak = (hwm if hwm is not None else rss_bytes()) - base
                rss_growth = max(0, int(peak))
            # after the timed loop, so that tracking every operator costs the timings nothing
            live_peak = live_tensor_peak(lambda: _one_step(step, batch))
        except Exception as exc:
            if not is_out_of_memory(exc):
                raise
            oom_text = str(exc).splitlines()[0][:300]
        finally:
            step = batch = None  # type: ignore[assignment]  # drop references before freeing memory
            release_free_memory()
            if dev.type == "cuda":
                torch.cuda.empty_cache()
            if threads:
                torch.set_num_threads(previous_threads)
    if oom_text:
        gb = _capacity_bytes(dev, memory_limit_bytes) / 1e9
        oom: Measurement = {
            "batch_size": int(batch_size),
            "device": _device_name(dev),
            "threads": used_threads,
            "allocator": current_allocator(),
            "warmup": warmup,
            "status": "oom",
            "message": f"batch {batch_size} does not fit in {gb:.1f} GB",
            "error": oom_text,
            "seconds_per_batch": None,
            "mean_seconds_per_batch": None,
            "iqr": None,
            "iterations": 0,
            "examples_per_second": None,
            "peak_memory_bytes": None,
            "live_tensor_peak_bytes": None,
            "rss_growth_bytes": None,
            "max_memory_reserved_bytes": None,
            "achieved_flops": None,
            "noisy": False,
            "unreliable": False,
            "unreliable_reasons": [],
            "samples": [],
        }
        _add_step(oom, info)
        return oom
    seconds, iqr = summarise_samples(timing["samples"])
    reasons = judge(
        timing["contention"],
        halfwidth=timing["interval_halfwidth"] if timing["interval_halfwidth"] is not None else math.inf,
        timed_seconds=sum(timing["samples"]),
        iterations=len(timing["samples"]),
    )
    assert info is not None  # the step was built: it was timed
    ok: Measurement = {
        "batch_size": int(batch_size),
        "device": _device_name(dev),
        "threads": used_threads,
        "allocator": current_allocator(),
        "warmup": timing["warmed"],
        "status": "ok",
        "message": "",
        "seconds_per_batch": seconds,
        # The mean charges every stall (preemption by other processes, page-fault storms); one long stall
        # among few steps moves it far (a 7x headline in issue 24), so the headline takes the trimmed mean
        # (engine.robust.headline_step, chosen by bench epoch)
        "mean_seconds_per_batch": statistics.fmean(timing["samples"]),
        "trimmed_mean_seconds_per_batch": trimmed_mean(timing["samples"]),
        "iqr": iqr,
        "iterations": len(timing["samples"]),
        "examples_per_second": batch_size / seconds,
        "peak_memory_bytes": max(0, int(peak)),
        "rss_growth_bytes": rss_growth,
        "max_memory_reserved_bytes": reserved,
        "live_tensor_peak_bytes": live_peak,
        "achieved_flops": info["step_flops_per_example"] * batch_size / seconds,
        "noisy": iqr / seconds > NOISY_IQR_FRACTION,
        "unreliable": bool(reasons),
        "unreliable_reasons": reasons,
        "samples": timing["samples"],
        "user_seconds_per_step": timing["user_seconds_per_step"],
        "system_seconds_per_step": timing["system_seconds_per_step"],
        "minor_faults_per_step": timing["minor_faults_per_step"],
        "major_faults_per_step": timing["major_faults_per_step"],
        "median_interval": timing["median_interval"],
        "interval_halfwidth": timing["interval_halfwidth"],
        "stopped": timing["stopped"],
        "contention": timing["contention"],
    }
    _add_step(ok, info)
    return ok


class _StepInfo(TypedDict):
    family: str
    flops_per_example: int
    step_flops_per_example: int
    step_flops_formula: str


def _add_step(measured: Measurement, info: _StepInfo | None) -> None:
    """What a measurement says of its step: nothing where it ran out of memory before the step was built."""
    if info is not None:
        measured["family"] = info["family"]
        measured["flops_per_example"] = info["flops_per_example"]
        measured["step_flops_per_example"] = info["step_flops_per_example"]
        measured["step_flops_formula"] = info["step_flops_formula"]


def _step_info(step: TrainingStep) -> _StepInfo:
    return {
        "family": step.family,
        "flops_per_example": sum(step.forward_flops.values()),
        "step_flops_per_example": step.step_flops_per_example,
        "step_flops_formula": step.step_formula,
    }
