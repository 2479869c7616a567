"""Each job's work plan (advisor.engine.remaining.WorkPlan) at submit, and its remaining time while it runs.

A calibration's plan is its sweep as the worker will run it (child.run_sweep's batches, threads, budget and
stops) with each configuration's seconds from the candidate's estimated time per batch on the device (its
profile's cost model where it has one, else the recommendation's estimate); a probe's is its time limit,
which its progress counts against. A device's recent pace (taken / expected over its finished jobs of the
kind) scales both, so a busy box or another stopping rule is learned from what ran."""

from __future__ import annotations

import logging
import statistics
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from django.conf import settings
from django.utils import timezone

from advisor import engine
from advisor.engine.costmodel import step_cost, with_current_factor
from advisor.engine.profile import DeviceProfile
from advisor.engine.remaining import (
    CHILD_START_S,
    Mark,
    Remaining,
    StoredMark,
    WorkPlan,
    device_pace,
    expected_duration,
    marks_from_json,
    plan_from_json,
    plan_to_json,
    remaining,
)
from advisor.engine.sweepplan import SweepPlan, Timed, first_child, sweep_to_json, sweep_work, with_measured
from advisor.models import CalibrationJob, Device, DeviceJob, Recommendation
from advisor.probe.models import ProbeJob

log = logging.getLogger(__name__)

# as advisor.calibration.runner resolves a JobPlan: the first child's share of an "auto" allocator job, the
# margin before its hard limit, and a doubling sweep's own budget
FIRST_PHASE_SHARE, EXIT_MARGIN_S, SWEEP_BUDGET_S = 0.7, 1.5, 15.0
PROBE_START_S = 4.0  # the probe's child imports torch and scikit-learn before its time limit starts
KEEP_MARKS = 20  # the first mark and the latest ones: the estimator reads the first and the last


def calibration_plan(job: CalibrationJob) -> WorkPlan:
    """The sweep the worker will run for this (unsaved) job: runner.child_payload and running._plan_options
    resolve its request the same way."""
    return _calibration(job)[0]


def _calibration(job: CalibrationJob) -> tuple[WorkPlan, SweepPlan]:
    """calibration_plan, with the sweep it plans."""
    recommendation, device, options = job.recommendation, job.device, job.options
    cand = recommendation.result["candidates"][job.candidate]
    cpu = device.kind == "cpu"
    cores = device.cores or 1
    examples = int(recommendation.spec.get("data", {}).get("examples") or 4096)
    limit = float(job.time_limit_seconds)
    auto = str(options.get("allocator", "auto")) == "auto" and cpu
    budget = max(0.0, limit * (FIRST_PHASE_SHARE if auto else 1.0) - EXIT_MARGIN_S)
    if not job.batch_sizes:
        budget = min(budget, SWEEP_BUDGET_S)
    sweep = SweepPlan(
        batch_sizes=tuple(job.batch_sizes),
        threads=tuple(job.threads) or (tuple(range(1, cores + 1)) if cpu else (cores,)),
        batch_start=int((cand.get("training") or {}).get("batch_size") or 32),
        max_batch_size=max(1, min(int(options.get("max_batch_size", 4096)), examples)),
        min_iterations=int(options.get("min_iterations", 5)),
        min_seconds=float(options.get("min_seconds", settings.CALIBRATION_MIN_SECONDS)),
        warmup=int(options.get("warmup", 2)),
        budget_s=budget,
        limit_s=limit,
    )
    plan = sweep_work(sweep, _per_batch(recommendation, job.candidate, device))
    recent = recent_marks(device, str(cand.get("family", "")))
    plan = replace(plan, startup_s=startup_seconds(device))  # the re-measure starts no child of its own
    if auto:  # the allocator re-measure: as often as it came after this family's latest sweeps here
        seen = [any(len(m) > 3 and m[3] for m in marks) for marks in recent]
        plan = replace(plan, restart_chance=sum(seen) / len(seen) if seen else 0.5)
    if options.get("spread") or options.get(
        "data_parallel"
    ):  # rendezvous and DDP ranks: a share of the limit
        extra = max(0.0, limit - plan.expected_s) / 2
        plan = replace(plan, finish_s=plan.finish_s + extra, restart_chance=0.0)
    return plan, sweep


def calibration_work_plan(job: CalibrationJob) -> dict[str, Any]:
    """calibration_plan as stored on the job, with its candidate's family (restart_chance reads it) and, for a
    sweep, its settings (the remaining time prices a re-measure by them: engine.sweepplan.with_measured)."""
    family = str(job.recommendation.result["candidates"][job.candidate].get("family", ""))
    plan, sweep = _calibration(job)
    spread = job.options.get("spread") or job.options.get("data_parallel")
    return {**plan_to_json(plan, family=family), **({} if spread else sweep_to_json(sweep))}


def measured_so_far(job: DeviceJob) -> list[Timed]:
    """A calibration's configurations its first child timed so far (engine.sweepplan.first_child)."""
    if not isinstance(job, CalibrationJob):
        return []
    fields = ("batch_size", "threads", "seconds_per_batch", "allocator", "result__unreliable")
    return first_child(list(job.measurements.order_by("pk").values_list(*fields)))


def recent_marks(device: Device, family: str, *, keep: int = 10) -> list[list[StoredMark]]:
    """The marks of this family's latest finished calibrations on the device, newest first."""
    rows = (
        CalibrationJob.objects.filter(device=device, status=DeviceJob.SUCCEEDED, work_plan__family=family)
        .order_by("-finished_at")
        .values_list("marks", flat=True)[:keep]
    )
    return [list(marks or []) for marks in rows]


def startup_seconds(device: Device, *, keep: int = 10) -> float:
    """From the claim to the first configuration, as the device's latest calibrations took it (the median;
    it moves with the load on a shared box); before any, its profiling child's start-up (1.4 s where the
    first configurations began at 1.7-1.9 s, on a quiet host on which CHILD_START_S's 7 s, taken on a busy
    one, put every queued job's start twice too late: bench/results/queue_amd-epyc-2c_forecast-chance/);
    else engine.remaining.CHILD_START_S."""
    rows = (
        CalibrationJob.objects.filter(device=device, status=DeviceJob.SUCCEEDED)
        .exclude(marks=[])
        .order_by("-finished_at")
        .values_list("marks", flat=True)[:keep]
    )
    firsts = [float(marks[0][0]) for marks in rows if marks]
    if firsts:
        return statistics.median(firsts)
    profiled = (device.profile or {}).get("child_start_seconds")
    return float(profiled) if isinstance(profiled, int | float) and profiled > 0 else CHILD_START_S


def _per_batch(recommendation: Recommendation, candidate: int, device: Device) -> Callable[[int, int], float]:
    """Seconds per batch at (batch, threads): the device profile's cost model where it speaks for this device
    (the same figures the recommendation's profiled estimate is made of), else the stored estimate."""
    cand = recommendation.result["candidates"][candidate]
    profile: DeviceProfile | None = None
    if device.profile and device.profile.get("kind") == device.kind:
        try:
            profile = with_current_factor(device.profile)
        except (KeyError, TypeError, ValueError, ZeroDivisionError):
            profile = None

    def per_batch(batch: int, threads: int) -> float:
        if profile is not None:
            try:
                return float(step_cost(cand, batch_size=batch, threads=threads, profile=profile).seconds)
            except (KeyError, TypeError, ValueError, ZeroDivisionError):
                pass
        try:
            return float(
                engine.estimate_for(recommendation.result, candidate, batch_size=batch)["seconds_per_batch"]
            )
        except (KeyError, TypeError, ValueError, ZeroDivisionError):
            return 0.01

    return per_batch


def probe_plan(*, time_limit_seconds: int) -> WorkPlan:
    """A probe reports the share of its time limit it has used: one step of that many seconds."""
    limit = float(time_limit_seconds)
    return WorkPlan(PROBE_START_S, (limit,), 1.0, limit + PROBE_START_S + 5.0, limit)


# --- while it runs -----------------------------------------------------------------------------------------


def add_mark(
    marks: list[StoredMark],
    *,
    at_s: float,
    done: float,
    total: float,
    restart: bool = False,
    restart_chance: float | None = None,
    threads: int | None = None,
    step_left_s: float | None = None,
) -> list[StoredMark] | None:
    """The job's marks with this progress event (engine.remaining.StoredMark), when it changed the count of
    finished steps or announced the re-measure, or said how long its step under way still needs; else None.
    What the job reported rides along: a chance of a re-measure, the thread count of the step it starts;
    how long the step under way still needs goes on its mark, with when it was said (the latest word)."""
    if marks and marks[-1][1] == done and marks[-1][2] == total and not restart:
        if step_left_s is None:
            return None
        # flag, chance and thread count as they were (padded where the mark had none), then the word
        head = [*marks[-1][:6], *[0, None, None][max(0, len(marks[-1]) - 3) :]]
        return [*marks[:-1], [*head, round(step_left_s, 3), round(at_s, 3)]]
    tail: StoredMark = [1] if restart else []
    if restart_chance is not None or threads is not None:
        chance = None if restart_chance is None else round(restart_chance, 3)
        tail = [1 if restart else 0, chance, *([] if threads is None else [threads])]
    kept = [*marks, [round(at_s, 3), done, total, *tail]]
    return kept if len(kept) <= KEEP_MARKS else [kept[0], *kept[-(KEEP_MARKS - 1) :]]


def pace(model: type[CalibrationJob] | type[ProbeJob], device_id: str) -> float:
    """The device's recent pace for this kind of job (engine.remaining.device_pace)."""
    rows = (
        model._default_manager.filter(
            device_id=device_id, status=DeviceJob.SUCCEEDED, work_plan__isnull=False, started_at__isnull=False
        )
        .order_by("-finished_at")
        .values_list("work_plan", "time_limit_seconds", "started_at", "finished_at")[:10]
    )
    history = [
        (expected_duration(plan_from_json(p, float(limit))), (end - start).total_seconds())
        for p, limit, start, end in reversed(list(rows))
    ]
    return device_pace(history)


def expected_seconds(job: DeviceJob, *, at_pace: float) -> float:
    return expected_duration(plan_from_json(job.work_plan, float(job.time_limit_seconds)), pace=at_pace)


def left(job: DeviceJob, *, at_pace: float, now: Any = None) -> Remaining:
    """A running job's remaining seconds (engine.remaining.remaining) from its plan and marks."""
    plan = plan_from_json(job.work_plan, float(job.time_limit_seconds))
    elapsed = max(0.0, ((now or timezone.now()) - (job.started_at or timezone.now())).total_seconds())
    marks = marks_from_json(job.marks or [])
    if job.work_plan is None and job.progress > 0:
        # a job queued before plans: one step as long as its limit, of which its progress is done
        plan = WorkPlan(0.0, (float(job.time_limit_seconds),), 0.0, float(job.time_limit_seconds))
        marks = [Mark(0.0, 0.0, 1.0), Mark(elapsed, job.progress, 1.0)]
    plan = with_measured(plan, job.work_plan, measured_so_far(job), marks)
    return remaining(plan, marks, elapsed, prior_pace=at_pace)
