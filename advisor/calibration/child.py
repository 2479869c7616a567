"""The body of a calibration child process: a sweep of configurations, each result sent as soon as it exists.

Runs in a process started with the "spawn" method, so glibc, the allocator and torch start fresh with the
environment the parent chose. Talks to the parent only through `events` (a multiprocessing queue):
  {"type": "progress", ...}, {"type": "result", ...}  relayed to the caller as they come;
  {"type": "done", "stop_reason": ...}                the sweep ended normally;
  {"type": "error", "message": ...}                   an exception ended it (a crash sends nothing).
"""

from __future__ import annotations

import os
import statistics
import time
import traceback
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NotRequired, Protocol, TypedDict, TypeVar

from advisor.calibration.allocator import current_allocator, tune_in_process
from advisor.calibration.findings import ResultEvent, configs_to_recheck, system_share
from advisor.calibration.parent_death import die_with_parent
from advisor.contract import Measurement, Trainable
from advisor.engine.sweepplan import PLATEAU_DOUBLINGS, after_batch
from advisor.engine.units import threads_text

# A configuration's timing may go on past min_seconds (measure()'s stopping rule) up to this share of the
# budget left per configuration still planned (the rest pays for building, warm-up, gathering and the
# live-tensor pass), and never beyond MAX_SECONDS_FACTOR x min_seconds.
TIMING_SHARE = 0.6
# A configuration whose steps run this many times slower than the sweep's latest configuration implies
# (that thread count's, else any, scaled by the batch size) stalled: it stops with measure.FEWEST_AT_LIMIT
# steps, unreliable. Beside busy processes 2-thread steps stalled 45-440x; a quiet sweep's steps follow
# its batch sizes within a factor of two (bench/results/queue_amd-epyc-2c_forecast-loaded/).
STALL_FACTOR = 4.0
# A configuration whose steps take this long says, after each (at most every TICK_EVERY_S), how long it
# still needs (_Word), so that the remaining time follows a stalled one instead of counting it done when
# its plan ran out (one took 35 s of 5 s steps beside two busy processes: queue_*_forecast-loaded/).
TICK_MIN_S, TICK_EVERY_S = 0.25, 0.5

T = TypeVar("T")


if TYPE_CHECKING:
    from advisor.calibration.summary import RecommendedPlan


class EventSink(Protocol):
    def put(self, obj: Any) -> None: ...


class ChildPayload(TypedDict):
    """What a sweep's child gets (runner.child_payload): its JobPlan's fields with the defaults resolved,
    the start batch and the child's own time budget."""

    candidate: Trainable
    device: str
    batch_sizes: list[int]  # empty: double from batch_start
    threads: list[int]
    min_iterations: int
    min_seconds: float
    warmup: int
    time_limit_s: float
    max_batch_size: int
    allocator: str
    memory_limit_bytes: int | None
    stop_on_plateau: bool
    system_share_threshold: float
    sweep_budget_s: float | None
    recommended: RecommendedPlan | None
    examples: int
    batch_start: int
    budget_s: float  # the child's soft budget: no configuration starts that it expects to end later
    budget_name: NotRequired[str]  # what that budget is called where it stops the sweep
    # an "auto" job's allocator re-measure: after the sweep, when system time is significant
    # (system_share_threshold), the fastest configuration again under the tuned thresholds, in this child,
    # if it is expected to end by `remeasure_deadline` (time.monotonic(), shared by the processes)
    remeasure: NotRequired[bool]
    remeasure_deadline: NotRequired[float]
    parent_pid: NotRequired[int]  # set as it starts (runner._run_child)


def batch_plan(payload: ChildPayload) -> tuple[list[int], bool]:
    """The batch sizes to try, ascending, and whether they are a doubling sweep."""
    if payload["batch_sizes"]:
        return sorted({int(b) for b in payload["batch_sizes"]}), False
    sizes, b = [], max(1, int(payload["batch_start"]))
    while b <= int(payload["max_batch_size"]):
        sizes.append(b)
        b *= 2
    return sizes or [int(payload["max_batch_size"])], True


def _apply_memory_limit(payload: ChildPayload) -> None:
    limit = payload.get("memory_limit_bytes")
    if not limit:
        return
    if payload["device"] == "cpu":
        from advisor.calibration.memory import limit_data_memory

        limit_data_memory(int(limit))
        return
    import torch

    dev = torch.device(payload["device"])
    total = torch.cuda.get_device_properties(dev).total_memory
    torch.cuda.set_per_process_memory_fraction(min(1.0, int(limit) / total), dev)


def _preload_optimizer_machinery() -> None:
    """The first torch.optim optimizer imports torch._dynamo (seconds); pay that before the first
    configuration, so that its duration (from which the sweep predicts the next one's) is the measurement's
    own."""
    import torch

    torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1).zero_grad()


def stalled_after(
    seen: tuple[int, float] | None, batch: int, min_iterations: int, max_seconds: float
) -> float | None:
    """Seconds of timing after which a configuration at `batch` counts as stalled: STALL_FACTOR times its
    minimum steps at the seconds per batch that `seen` (the batch and seconds per batch of the sweep's
    latest configuration at that thread count, else of any) implies, never within its share of the time
    (`max_seconds`); None before any configuration was timed."""
    if seen is None:
        return None
    expected = seen[1] * batch / seen[0]
    return max(max_seconds, STALL_FACTOR * min_iterations * expected)


def _latest(book: dict[int | None, T], threads: int) -> T | None:
    """A thread count's latest figure in one of _Sweep's books, else the latest of any thread count."""
    return book.get(threads, book.get(None))


class _Sweep:
    """Measures configurations one by one, sends each result at once, keeps the bookkeeping for stopping."""

    def __init__(
        self,
        payload: ChildPayload,
        events: EventSink,
        total: int,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        # torch loads here, in the child, after its environment
        from advisor.calibration.epoch import loading_seconds_per_batch
        from advisor.calibration.measure import measure

        self.measure, self.gather = measure, loading_seconds_per_batch
        _preload_optimizer_machinery()
        self.payload, self.events = payload, events
        self.clock = clock  # the budget's clock (a test's own moves when told)
        self.started = clock()
        self.allocator = current_allocator()
        self.done, self.total = 0, total
        # each thread count's latest figures, and under None the latest of any (read by _latest): the
        # batch and seconds of its latest configuration, the batch and seconds per batch of its latest timed
        # one, the seconds after the timing of its latest one (_Word)
        self.took: dict[int | None, tuple[int, float]] = {}
        self.per_batch: dict[int | None, tuple[int, float]] = {}
        self.after: dict[int | None, float] = {}
        self.last_ok_batch: int | None = None
        self.results: list[ResultEvent] = []  # as sent, for the allocator re-measure's decision

    def expected_s(self, batch: int, threads: int) -> float | None:
        """A configuration's seconds from this thread count's latest one (else the latest of any), scaled by
        the batch size; None before any."""
        last = _latest(self.took, threads)
        return None if last is None else last[1] * batch / last[0]

    def out_of_time(self, batch: int, threads: int) -> bool:
        """Would the next configuration overrun the soft budget?"""
        expected = self.expected_s(batch, threads)
        return expected is not None and self.clock() - self.started + expected > float(
            self.payload["budget_s"]
        )

    def remeasure_tuned(self) -> None:
        """An "auto" job's allocator re-measure (rule cpu.allocator): when system time is a significant share
        of the fastest configuration's step, switch this process to the tuned thresholds and time that
        configuration again. Announced first with `restart`, so that the remaining time counts it."""
        p = self.payload
        if not p.get("remeasure") or system_share(self.results) < float(p["system_share_threshold"]):
            return
        recheck = configs_to_recheck(self.results)
        if not recheck:
            return
        batch, threads = recheck[0]
        deadline, expected = p.get("remeasure_deadline"), self.expected_s(batch, threads)
        if deadline is not None and expected is not None and time.monotonic() + expected > float(deadline):
            return
        if not tune_in_process():
            return
        # the sweep is over: what it planned and did not start will not run, so the announcement counts
        # one configuration ahead, not the rest of the plan (which the remaining time would price)
        self.total = self.done + 1
        step = "re-measuring 1 under the tuned allocator"
        self.events.put(
            {"type": "progress", "done": self.done, "total": self.total, "step": step, "restart": True}
        )
        self.allocator = current_allocator()
        self.run(batch, threads)

    def max_seconds(self) -> float:
        """This configuration's share of the time left: how long its timing may go on to pin its median."""
        from advisor.calibration.measure import MAX_SECONDS_FACTOR

        p = self.payload
        left = float(p["budget_s"]) - (self.clock() - self.started)
        share = TIMING_SHARE * left / max(1, self.total - self.done)
        minimum = float(p["min_seconds"])
        return max(minimum, min(share, MAX_SECONDS_FACTOR * minimum))

    def run(self, batch: int, threads: int) -> Measurement:
        step = f"batch {batch}, {threads_text(threads)}: timing"
        self.events.put(
            {
                "type": "progress",
                "done": self.done,
                "total": self.total,
                "step": step,
                "threads": threads,
                "pid": os.getpid(),
            }
        )
        t0 = time.monotonic()
        p = self.payload
        max_seconds = self.max_seconds()
        seen = _latest(self.per_batch, threads)
        cut = stalled_after(seen, batch, int(p["min_iterations"]), max_seconds)
        word = _Word(self, threads, step)
        result = self.measure(
            p["candidate"],
            device=p["device"],
            batch_size=batch,
            threads=threads,
            min_iterations=int(p["min_iterations"]),
            min_seconds=float(p["min_seconds"]),
            warmup=int(p["warmup"]),
            memory_limit_bytes=p.get("memory_limit_bytes"),
            max_seconds=max_seconds,
            cut_after_s=cut,
            on_step=word,
        )
        if result["status"] == "ok":
            self._add_gathering(result, batch, threads, cut)
            seconds = float(result["seconds_per_batch"] or 0.0)
            if seconds > 0:
                self.per_batch[threads] = self.per_batch[None] = (batch, seconds)
        word.close()
        self.took[threads] = self.took[None] = (batch, time.monotonic() - t0)
        self.done += 1
        if result["status"] == "oom" and self.last_ok_batch is not None:
            result["message"] += f"; {self.last_ok_batch} does"
        event: ResultEvent = {
            "type": "result",
            "batch_size": batch,
            "threads": threads,
            "allocator": self.allocator,
            "result": result,
            "pid": os.getpid(),
        }
        self.results.append(event)
        self.events.put(event)
        return result

    def _add_gathering(self, result: Measurement, batch: int, threads: int, cut: float | None) -> None:
        """A real epoch also gathers each shuffled batch from the data set, which measure()'s synthetic batch
        skips (bench epoch: the step statistic plus this predicts a real epoch). The data set it gathers
        from takes at most a quarter of a memory cap; where even that does not fit, the row goes without."""
        from advisor.calibration.epoch import GATHER_CAP_BYTES
        from advisor.calibration.measure import is_out_of_memory

        p = self.payload
        limit = p.get("memory_limit_bytes")
        try:
            result["gather_seconds_per_batch"] = self.gather(
                p["candidate"],
                batch_size=batch,
                examples=int(p.get("examples") or 4096),
                threads=threads,
                device=p["device"],
                cap_bytes=min(GATHER_CAP_BYTES, int(limit) // 4) if limit else GATHER_CAP_BYTES,
                max_seconds=cut,  # a stalled configuration's gathers stall too
            )
        except Exception as exc:
            if not is_out_of_memory(exc):
                raise

    def finish(self, stop_reason: str) -> None:
        self.events.put({"type": "done", "stop_reason": stop_reason, "done": self.done, "total": self.total})


class _Word:
    """What a configuration says, after each of its steps (measure's on_step) from TICK_MIN_S on and at most
    every TICK_EVERY_S, of the time it still needs: its fewest steps still to come at its median step so
    far (one slow step among fast ones is not the rest's length), then what followed the timing in the
    sweep's latest configuration at that thread count (the tracked step's own cost past a step, the
    gathers: under load 0.1-1.9 s that a word of steps alone left out; the stall cut that bounds the
    gathers said 17-22 s where 0.5-1.8 s were left, bench/results/queue_amd-epyc-2c_forecast-tail/)."""

    def __init__(self, sweep: _Sweep, threads: int, step: str) -> None:
        self.sweep, self.threads, self.step = sweep, threads, step
        self.after = _latest(sweep.after, threads) or 0.0
        self.steps: list[float] = []
        self.said = self.ended = sweep.clock()

    def __call__(self, seconds: float, left: int) -> None:
        self.steps.append(seconds)
        now = self.ended = self.sweep.clock()
        if seconds < TICK_MIN_S or now - self.said < TICK_EVERY_S:
            return
        self.said = now
        s = self.sweep
        ahead = left * statistics.median(self.steps) + self.after
        progress = {"type": "progress", "done": s.done, "total": s.total, "step": self.step}
        s.events.put({**progress, "threads": self.threads, "step_left_s": ahead, "pid": os.getpid()})

    def close(self) -> None:
        """The configuration ended: what followed its timing, less the tracked step its word counted."""
        if self.steps:
            after = max(0.0, self.sweep.clock() - self.ended - statistics.median(self.steps))
            self.sweep.after[self.threads] = self.sweep.after[None] = after


def run_sweep(payload: ChildPayload, events: EventSink) -> None:
    """Measure the planned configurations, ascending in batch size; stop early at out-of-memory, at the soft
    time budget, or (doubling sweeps) at a throughput plateau. A doubling sweep also drops thread counts that
    were more than PRUNE_MARGIN slower than the best at the previous batch size (unless that measurement was
    unreliable): the full thread scaling is measured at the first batch size, and hopeless configurations do
    not eat the time limit. Then, in an "auto" job, the allocator re-measure (_Sweep.remeasure_tuned)."""
    _apply_memory_limit(payload)
    sizes, doubling = batch_plan(payload)
    plan = [(b, [int(t) for t in payload["threads"]]) for b in sizes]
    sweep = _Sweep(payload, events, sum(len(ts) for _, ts in plan))
    reason = _measure_plan(payload, sweep, plan, doubling)
    sweep.remeasure_tuned()
    sweep.finish(reason)


def _measure_plan(
    payload: ChildPayload, sweep: _Sweep, plan: list[tuple[int, list[int]]], doubling: bool
) -> str:
    """run_sweep's configurations in order, until one of its stops; the stop's reason."""
    active = list(plan[0][1])
    best_rate, flat = 0.0, 0
    for batch, planned in plan:
        thread_list = [t for t in planned if t in active] if doubling else planned
        sweep.total -= len(planned) - len(thread_list)
        rates: dict[int, float] = {}
        doubtful: set[int] = set()  # unreliable: no ground to drop the thread count
        for t in thread_list:
            if sweep.out_of_time(batch, t):
                budget = payload.get("budget_name", "time limit")
                return f"{budget}: batch {batch}, {threads_text(t)} would not finish in time"
            result = sweep.run(batch, t)
            if result["status"] == "oom":
                return f"out of memory at batch {batch}"
            per_second = result["examples_per_second"]
            assert per_second is not None  # an "ok" configuration was timed
            rates[t] = float(per_second)
            if result.get("unreliable"):
                doubtful.add(t)
        sweep.last_ok_batch = batch
        if not doubling:
            continue
        active, best_rate, flat = after_batch(rates, best_rate, flat, frozenset(doubtful))
        if payload.get("stop_on_plateau", True) and flat >= PLATEAU_DOUBLINGS:
            return f"throughput plateau: {PLATEAU_DOUBLINGS} doublings up to batch {batch} gained < 5%"
    return f"reached the cap, batch {plan[-1][0]}" if doubling else "all configurations measured"


def child_main(payload: ChildPayload, events: Any) -> None:
    """Entry point of the spawned process; `events` is a multiprocessing queue."""
    die_with_parent(int(payload["parent_pid"]))
    code = 0
    try:
        run_sweep(payload, events)
    except BaseException as exc:  # report anything, even KeyboardInterrupt, before the process ends
        code = 1
        events.put(
            {
                "type": "error",
                "message": f"{type(exc).__name__}: {exc}",
                "traceback": traceback.format_exc(limit=8),
            }
        )
    # Flush the queue, then leave at once: tearing down an interpreter with torch loaded takes seconds.
    events.close()
    events.join_thread()
    os._exit(code)
