"""`run_job()`: a calibration job for the Celery task, measured in child processes.

Each set-up runs in a child started with the "spawn" method: clean memory, its own environment (glibc reads
MALLOC_* only at process start), and a hard stop (terminate, then kill) on cancellation or at the time limit.
The caller's process only relays events, so a crash or an OOM-kill of the child is reported, not inherited.

With allocator="auto" the job measures the sweep under glibc's default malloc; when system time is a
significant share of a step's CPU time (rule cpu.allocator), the same child switches to the tuned thresholds
(allocator.tune_in_process) and re-measures the fastest configuration, and the job reports the measured gain.
The sweep gets 70% of the time limit so the re-measure can still run; it starts no second child, whose
start-up (2.6-4.7 s on a 2-core VM) cost more than the configuration it timed
(bench/results/allocator_intel-xeon-2c_in-process/README.md).

A doubling sweep (no batch_sizes given) stops at out-of-memory, at max_batch_size, at a throughput plateau
(two doublings that gain < 5%), or before a configuration that would end after sweep_budget_s (15 s by
default, so that a default calibration of a small network stays well under 30 s on a 2-core laptop: about
3-8 s of child start, torch's import included, the sweep, and perhaps the tuned re-measure); it measures every
thread count at the first batch size and then only those within 25% of the best. Explicit batch_sizes x
threads are measured in full, within time_limit_s.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NotRequired, TypedDict, cast

from advisor.calibration.allocator import child_environment, current_allocator, preloadable
from advisor.calibration.child import ChildPayload, child_main
from advisor.calibration.devices import physical_cores
from advisor.calibration.findings import (
    AllocatorFinding,
    ResultEvent,
    allocator_finding,
    remeasure_chance,
    system_share,
)
from advisor.calibration.summary import RecommendedPlan, SweepSummary, sweep_summary
from advisor.calibration.supervisor import Event, supervise
from advisor.contract import Trainable

if TYPE_CHECKING:
    from advisor.calibration.scaling import ScalingRow

EXIT_MARGIN_S = 1.5  # the child's soft budget stops this much before the hard limit
FIRST_PHASE_SHARE = 0.7
ALLOCATORS = ("default", "tuned", "auto", "jemalloc", "tcmalloc")


class ChildStart(TypedDict):
    """A child the job started: its process id and the allocator set-up it ran under."""

    pid: int
    allocator: str


class JobSummary(SweepSummary):
    """What a calibration job concludes (`run_job`), kept in its `summary`: the sweep's summary (its
    `reasons` with the allocator finding's), how the job ended and what it ran."""

    status: str  # "succeeded", "failed", "cancelled" or "timed_out"
    error: str | None
    stop_reason: str | None
    elapsed_s: float
    configurations: int
    results: list[ResultEvent]  # dropped when the job is stored: each is a MeasuredConfiguration row
    children: list[ChildStart]
    allocator: AllocatorFinding | None
    # the worker adds the data-parallel rows (running._data_parallel), or says why no time was measured
    data_parallel: NotRequired[list[ScalingRow]]
    withheld: NotRequired[str]


class PlanError(ValueError):
    """A JobPlan with bad limits; `.errors` maps each field to its messages, like engine.SpecError."""

    def __init__(self, errors: dict[str, list[str]]) -> None:
        super().__init__("; ".join(f"{k}: {', '.join(v)}" for k, v in errors.items()))
        self.errors = errors


@dataclass(frozen=True)
class JobPlan:
    candidate: Trainable
    device: str = "cpu"
    batch_sizes: list[int] = field(default_factory=list)  # empty: double from training.batch_size
    threads: list[int] = field(default_factory=list)  # empty: 1..physical cores (cuda: physical cores)
    min_iterations: int = 5
    min_seconds: float = 1.0
    warmup: int = 2
    time_limit_s: float = 300.0
    max_batch_size: int = 4096
    allocator: str = "auto"  # "default" | "tuned" | "auto" | "jemalloc" | "tcmalloc" (where installed)
    memory_limit_bytes: int | None = None  # a real cap the child enforces (RLIMIT_DATA on CPU)
    stop_on_plateau: bool = True  # a doubling sweep also stops after two doublings that gain < 5%
    system_share_threshold: float = 0.10  # "significant" system time, as a share of a step's CPU time
    sweep_budget_s: float | None = 15.0  # a doubling sweep starts no configuration it expects to end later
    # the recommendation's plan as plain data, which the summary's findings judge (summary.sweep_summary):
    # {"threads", "threads_basis", "device", "batch_size", "batch_rule", "batch_max"}; None: physical cores
    recommended: RecommendedPlan | None = None
    # the data set's size: gathering a shuffled batch from it is part of a real epoch's step (epoch.py)
    examples: int = 4096

    def __post_init__(self) -> None:
        errors: dict[str, list[str]] = {}

        def bad(name: str, text: str) -> None:
            errors.setdefault(name, []).append(text)

        if not isinstance(self.candidate, dict) or "networks" not in self.candidate:
            bad("candidate", "a candidate dict with networks is required")
        if not (self.device == "cpu" or self.device.startswith("cuda")):
            bad("device", "cpu, cuda or cuda:N")
        if any(int(b) < 1 for b in self.batch_sizes):
            bad("batch_sizes", "each batch size must be at least 1")
        if any(int(t) < 1 for t in self.threads):
            bad("threads", "each thread count must be at least 1")
        for name in ("min_iterations", "max_batch_size", "examples"):
            if int(getattr(self, name)) < 1:
                bad(name, "must be at least 1")
        if self.warmup < 0 or self.min_seconds < 0:
            bad("warmup" if self.warmup < 0 else "min_seconds", "must not be negative")
        if self.time_limit_s <= 0:
            bad("time_limit_s", "must be positive")
        if self.allocator not in ALLOCATORS:
            bad("allocator", f"one of {', '.join(ALLOCATORS)}")
        elif self.allocator in ("jemalloc", "tcmalloc") and preloadable(self.allocator) is None:
            bad("allocator", f"{self.allocator} is not installed on this worker")
        if self.sweep_budget_s is not None and self.sweep_budget_s <= 0:
            bad("sweep_budget_s", "must be positive, or None for no budget")
        if self.memory_limit_bytes is not None and self.memory_limit_bytes <= 0:
            bad("memory_limit_bytes", "must be positive")
        if errors:
            raise PlanError(errors)


def child_payload(plan: JobPlan) -> ChildPayload:
    """What the first child gets: the plan with its defaults resolved (threads, start batch, budget)."""
    cores = physical_cores()
    threads = list(plan.threads) or (list(range(1, cores + 1)) if plan.device == "cpu" else [cores])
    auto = plan.allocator == "auto" and plan.device == "cpu"
    payload: ChildPayload = {
        "candidate": plan.candidate,
        "device": plan.device,
        "batch_sizes": list(plan.batch_sizes),
        "threads": threads,
        "min_iterations": plan.min_iterations,
        "min_seconds": plan.min_seconds,
        "warmup": plan.warmup,
        "time_limit_s": plan.time_limit_s,
        "max_batch_size": plan.max_batch_size,
        "allocator": plan.allocator,
        "memory_limit_bytes": plan.memory_limit_bytes,
        "stop_on_plateau": plan.stop_on_plateau,
        "system_share_threshold": plan.system_share_threshold,
        "sweep_budget_s": plan.sweep_budget_s,
        "recommended": plan.recommended,
        "examples": plan.examples,
        "batch_start": int((plan.candidate.get("training") or {}).get("batch_size") or 32),
        "budget_s": max(0.0, plan.time_limit_s * (FIRST_PHASE_SHARE if auto else 1.0) - EXIT_MARGIN_S),
    }
    if not plan.batch_sizes and plan.sweep_budget_s and plan.sweep_budget_s < payload["budget_s"]:
        payload["budget_s"], payload["budget_name"] = plan.sweep_budget_s, "sweep budget"
    return payload


def _run_child(
    payload: ChildPayload,
    env: dict[str, str],
    deadline: float,
    on_event: Callable[[Event], None],
    should_cancel: Callable[[], bool],
    results: list[ResultEvent],
    children: list[ChildStart],
) -> tuple[str, str | None, str | None]:
    """Run one child to its end; relay its events. Returns (status, error, stop_reason)."""

    def relay(event: Event) -> None:
        if event["type"] == "result":
            results.append(cast(ResultEvent, event))  # as child.py's Sweep.run sends it
        on_event(event)

    end = supervise(
        child_main,
        ({**payload, "parent_pid": os.getpid()},),
        name="calibration",
        env=env,
        deadline=lambda: deadline,
        on_event=relay,
        should_cancel=should_cancel,
        on_start=lambda pid: children.append({"pid": pid, "allocator": current_allocator(env)}),
    )
    if end.status == "done" and end.event is not None:
        return "succeeded", None, str(end.event["stop_reason"])
    if end.status == "error" and end.event is not None:
        return "failed", str(end.event["message"]), None
    if end.status == "died":
        return "failed", f"calibration process died with {end.exit}", None
    if end.status == "cancelled":
        return "cancelled", "cancelled on request", None
    return "timed_out", "time limit reached; the measured configurations are kept", None


def run_job(
    plan: JobPlan, *, on_event: Callable[[Event], None], should_cancel: Callable[[], bool]
) -> JobSummary:
    """Run the plan's sweep in child processes; return the job's summary (see module docstring)."""
    started = time.monotonic()
    deadline = started + plan.time_limit_s
    payload = child_payload(plan)
    results: list[ResultEvent] = []
    children: list[ChildStart] = []
    auto = plan.allocator == "auto" and plan.device == "cpu"
    first = "default" if plan.allocator == "auto" else plan.allocator

    def sweep_event(event: Event) -> None:
        # while the first child sweeps, each progress report says how likely the re-measure now looks, so
        # that the remaining time counts it (or not) before it is announced
        if auto and event["type"] == "progress":
            chance = remeasure_chance(results, plan.system_share_threshold)
            if chance is not None:
                event = {**event, "restart_chance": chance}
        on_event(event)

    if auto:  # the child re-measures under the tuned thresholds itself, if there is time left for it
        payload = {**payload, "remeasure": True, "remeasure_deadline": deadline - EXIT_MARGIN_S}
    status, error, stop_reason = _run_child(
        payload, child_environment(first), deadline, sweep_event, should_cancel, results, children
    )
    finding: AllocatorFinding | None = None
    if auto and status == "succeeded":
        finding = allocator_finding(results, system_share(results), plan.system_share_threshold)
    summary = sweep_summary(results, plan=plan.recommended)
    if status == "succeeded":
        on_event({"type": "progress", "done": len(results), "total": len(results), "step": "finished"})
    return {
        "status": status,
        "error": error,
        "stop_reason": stop_reason,
        "elapsed_s": time.monotonic() - started,
        "configurations": len(results),
        "results": results,
        "children": children,
        "fastest": summary["fastest"],
        "thread_scaling": summary["thread_scaling"],
        "batch_scaling": summary["batch_scaling"],
        "oom": summary["oom"],
        "threads_rule": summary["threads_rule"],
        "batch_rule": summary["batch_rule"],
        "unreliable": summary["unreliable"],
        "reasons": summary["reasons"] + ([finding["reason"]] if finding and finding["reason"] else []),
        "allocator": finding,
    }
