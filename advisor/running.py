"""Running one calibration job on this worker: claim it, measure in a child process, save as it goes."""

from __future__ import annotations

import math
import time
from typing import TYPE_CHECKING, Any, NotRequired, TypedDict

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from advisor import engine, jobs
from advisor.contract import Candidate, Estimate
from advisor.models import CalibrationJob, MeasuredConfiguration
from advisor.queries import recommendation_payload
from advisor.services import CALIBRATIONS

if TYPE_CHECKING:  # torch's side, imported where a job runs
    from advisor.calibration.scaling import ScalingRow
    from advisor.calibration.summary import Doubtful, RecommendedPlan


class _DataParallelPart(TypedDict):
    """What the data-parallel measurement after a sweep adds to its summary."""

    status: str
    error: str | None
    data_parallel: NotRequired[list[ScalingRow]]


def run_calibration_job(*, job_id: int) -> str:
    """Claim the job (a re-delivered or duplicate message does nothing), then measure its sweep in child
    processes, saving each configuration as it arrives. Returns the job's final status (or 'skipped')."""
    return jobs.run_claimed(
        CALIBRATIONS,
        job_id,
        related=("device", "recommendation"),
        watcher=lambda job: jobs.Watcher(job, on_other=lambda event: _on_result(job, event)),
        execute=_measure,
        conclude=conclude,
    )


def _measure(job: CalibrationJob, watcher: jobs.Watcher) -> dict[str, Any]:
    from advisor.calibration import JobPlan, run_job

    started = time.monotonic()
    candidate = job.recommendation.result["candidates"][job.candidate]
    if job.options.get("spread"):
        from advisor.spread import run_participant

        return dict(run_participant(job, watcher, candidate))  # the job machinery's outcome
    plan = JobPlan(
        candidate=candidate,
        device=_torch_device(job),
        batch_sizes=list(job.batch_sizes),
        threads=list(job.threads),
        time_limit_s=float(job.time_limit_seconds),
        recommended=recommended_plan(job),
        **_plan_options(job),
    )
    summary = run_job(plan, on_event=watcher.on_event, should_cancel=watcher.should_cancel)
    worlds = [int(w) for w in job.options.get("data_parallel", [])]
    if worlds and summary.get("status") == "succeeded":
        left = float(job.time_limit_seconds) - (time.monotonic() - started)
        return {**summary, **_data_parallel(job, candidate, worlds, left, watcher)}
    return dict(summary)  # the job machinery's outcome, for conclude


def _data_parallel(
    job: CalibrationJob,
    candidate: Candidate,
    worlds: list[int],
    seconds_left: float,
    watcher: jobs.Watcher,
) -> _DataParallelPart:
    """After the sweep: DDP ranks at each world size, each with the candidate's own batch size (gloo ranks
    sharing the CPU's cores, or NCCL ranks with a GPU each). The rows go to summary["data_parallel"]; a
    failure of this part fails the job with its reason."""
    from advisor.calibration import ScalingPlan, run_scaling
    from advisor.calibration.scaling import cuda_devices, gpu_order

    if seconds_left <= 1:
        return {"status": "timed_out", "error": "no time was left for the data-parallel measurement"}
    options = _plan_options(job)
    cuda = job.device.kind == "cuda"
    plan = ScalingPlan(
        candidate,
        world_sizes=worlds,
        # On a GPU: NCCL, rank 0 on the job's own GPU and the others on the rest this worker sees.
        device="cuda" if cuda else "cpu",
        gpus=tuple(gpu_order(job.device.index, cuda_devices())) if cuda else None,
        min_seconds=float(job.options.get("data_parallel_min_seconds", options["min_seconds"])),
        time_limit_s=seconds_left,
        # The sweep's "auto" ends at tuned wherever the default allocator costs anything (findings.py).
        allocator="tuned" if options.get("allocator", "auto") == "auto" else str(options["allocator"]),
    )

    def on_event(event: dict[str, Any]) -> None:
        if event["type"] == "progress" and "total" in event:  # not the ranks' own "timing" notes
            watcher.rows.update(step=f"data parallel: {event['step']}"[:300], heartbeat_at=timezone.now())

    result = run_scaling(plan, on_event=on_event, should_cancel=watcher.should_cancel)
    return {"data_parallel": result["rows"], "status": result["status"], "error": result["error"]}


def _on_result(job: CalibrationJob, event: dict[str, Any]) -> None:
    if event["type"] == "result":
        record_result(job=job, event=event)


PLAN_OPTIONS = {"min_iterations", "min_seconds", "warmup", "allocator", "max_batch_size"}


def _plan_options(job: CalibrationJob) -> dict[str, Any]:
    """The user's options over the defaults; a doubling sweep never goes past the data set's own size,
    since no epoch can use a larger batch."""
    examples = int(job.recommendation.spec.get("data", {}).get("examples") or 4096)
    chosen = {k: v for k, v in job.options.items() if k in PLAN_OPTIONS}
    chosen["max_batch_size"] = max(1, min(int(chosen.get("max_batch_size", 4096)), examples))
    chosen["examples"] = examples
    chosen.setdefault("min_seconds", settings.CALIBRATION_MIN_SECONDS)
    return chosen


def recommended_plan(job: CalibrationJob) -> RecommendedPlan | None:
    """What the recommendation planned for this candidate, as plain data for the sweep's findings: its threads
    and why (the plan as it stands, a measurement of the first candidate followed), its batch and the rule
    that chose it, and the largest batch the engine would choose for this data set. None for a
    recommendation too old to say (the findings then judge against the physical cores and say so)."""
    try:
        return _recommended_plan(job)
    except (KeyError, IndexError, TypeError, ValueError):
        return None


def _recommended_plan(job: CalibrationJob) -> RecommendedPlan:
    payload = recommendation_payload(job.recommendation)
    plan = payload["hardware_plan"]
    candidate = payload["candidates"][job.candidate]
    rules = {r["rule"] for r in candidate.get("reasons", [])}
    basis = plan.get("threads_basis") or (  # stored before threads_basis: the reason says which
        "profiled"
        if any(
            "profile of" in r["text"] for r in plan.get("reasons", []) if r["rule"].startswith("cpu.threads")
        )
        else "cores"
    )
    profile = job.recommendation.result.get("device_profile") or {}
    return {
        "threads": plan.get("threads"),
        "threads_basis": basis,
        "device": profile.get("device") or profile.get("processor"),
        "batch_size": candidate["training"]["batch_size"],
        "batch_rule": next(
            (r for r in ("plan.measured", "batch.profiled", "batch.start", "gpu.memory") if r in rules), None
        ),
        "batch_max": engine.largest_batch(
            candidate, int(job.recommendation.spec.get("data", {}).get("examples") or 0)
        ),
    }


def _torch_device(job: CalibrationJob) -> str:
    return "cpu" if job.device.kind == "cpu" else f"cuda:{job.device.index}"


def conclude(job: CalibrationJob, watcher: jobs.Watcher | None, summary: dict[str, Any]) -> str:
    """Finish the job from its sweep's summary: the measured estimate from its reliable configurations; a
    sweep that measured only unreliable ones succeeds without one, its summary's `withheld` saying why."""
    status = jobs.final_status(summary)
    error = str(summary.get("error") or "")
    if summary.get("status") == "timed_out":
        error = error or f"stopped at the time limit of {job.time_limit_seconds} s"
    estimate = measured_estimate(job, summary) if status == CalibrationJob.SUCCEEDED else None
    if status == CalibrationJob.SUCCEEDED and estimate is None and not job.options.get("spread"):
        if summary.get("unreliable"):  # measured, but nothing firm enough to replace the estimate
            summary = {**summary, "withheld": withheld_text(summary["unreliable"])}
        else:
            status, error = CalibrationJob.FAILED, "no configuration could be measured (all out of memory?)"
    # Each configuration's result, with all its step samples, is in its MeasuredConfiguration row already.
    summary = {key: value for key, value in summary.items() if key != "results"}
    finished = jobs.finish(job, status=status, error=error, summary=summary, estimate=estimate)
    if status == CalibrationJob.SUCCEEDED and job.device.profile:  # learn from it (engine.learned)
        transaction.on_commit(lambda: refit_after(job))
    return finished


def refit_after(job: CalibrationJob) -> None:
    """Queue the device's time-model refit on its own queue: its worker runs it between jobs."""
    from advisor.celery import app

    app.send_task("advisor.refit_time_model", args=[job.device_id], queue=job.device.queue)


def record_result(*, job: CalibrationJob, event: dict[str, Any]) -> MeasuredConfiguration:
    result = event["result"]
    return MeasuredConfiguration.objects.create(
        job=job,
        batch_size=event["batch_size"],
        threads=event.get("threads"),
        allocator=event.get("allocator", "default"),
        status=result.get("status", "ok"),
        seconds_per_batch=result.get("seconds_per_batch") if result.get("status", "ok") == "ok" else None,
        result=result,
    )


def measured_estimate(job: CalibrationJob, summary: dict[str, Any] | None = None) -> Estimate | None:
    """Time to train at the set-up the user will train with: the candidate's own batch size (else the measured
    one nearest to it), at whichever thread count and allocator ran it fastest; where the sweep's batch
    finding (summary["batch_rule"]) disagrees with the plan, at the batch it measured best, which
    `measured_at.best_batch` names so that the recommendation follows it (engine.follow_measurement). The
    fastest configuration per example overall is in the summary; it may be a batch nobody trains with.
    Unreliable configurations (contention seen, or a median not pinned down) are never the headline: None
    where every measured one was."""
    ok = [
        m
        for m in job.measurements.all()
        if m.status == "ok" and m.seconds_per_batch and not (m.result or {}).get("unreliable")
    ]
    if not ok:
        return None
    planned = int(job.recommendation.result["candidates"][job.candidate]["training"]["batch_size"])
    finding = (summary or {}).get("batch_rule") or {}
    best_batch = finding.get("measured_best_batch") if finding.get("agrees") is False else None
    planned = int(best_batch or planned)
    nearest = min({m.batch_size for m in ok}, key=lambda b: (abs(math.log(b / planned)), b))
    best = min((m for m in ok if m.batch_size == nearest), key=lambda m: float(m.seconds_per_batch or 0))
    per_batch, source = epoch_step_seconds(best)
    estimate = engine.measured_estimate(
        job.recommendation.result, job.candidate, seconds_per_batch=per_batch, batch_size=best.batch_size
    )
    estimate["measured_at"] = {
        "batch_size": best.batch_size,
        "threads": best.threads,
        "allocator": best.allocator,
        "device": job.device_id,
        "step": source,
    }
    if best_batch and best.batch_size == best_batch:
        estimate["measured_at"]["best_batch"] = int(best_batch)
    return estimate


def withheld_text(unreliable: list[Doubtful]) -> str:
    """Why a finished calibration has no measured time: every configuration it measured was unreliable."""
    from advisor.calibration.summary import unreliable_text

    return (
        "No measured time: every configuration this calibration measured was unreliable, so the estimate "
        f"before it stands. {unreliable_text(unreliable)} Measure again when the device is quieter."
    )


def epoch_step_seconds(m: MeasuredConfiguration) -> tuple[float, str]:
    """The seconds per batch that predict a real epoch, and which statistic they are
    (engine.robust.headline_step: the trimmed mean step plus gathering, chosen by `python -m bench epoch`;
    older results fall back to the mean step, then the median, and say so in the source)."""
    from advisor.engine.robust import headline_step

    return headline_step(m.result or {}, float(m.seconds_per_batch or 0))
