"""Running one calibration job on this worker: claim it, measure in a child process, save as it goes."""

from __future__ import annotations

import logging
import math
import time
from typing import Any

from django.conf import settings
from django.db.models import F
from django.utils import timezone

from advisor import engine
from advisor.models import CalibrationJob, Measurement

log = logging.getLogger(__name__)

# Cancel checks and heartbeats hit the database; once a second is plenty for both.
CHECK_EVERY_SECONDS = 1.0


def run_calibration_job(*, job_id: int) -> str:
    """Claim the job with a conditional UPDATE so a re-delivered or duplicate message does nothing, then
    measure. Returns the job's final status (or 'skipped')."""
    claimed = CalibrationJob.claim(job_id)
    if not claimed:
        log.info("calibration %s not claimed (already taken, finished or cancelled)", job_id)
        return "skipped"
    job = CalibrationJob.objects.select_related("device", "recommendation").get(pk=job_id)
    from advisor.calibration import JobPlan, run_job

    candidate = job.recommendation.result["candidates"][job.candidate]
    plan = JobPlan(
        candidate=candidate,
        device=_torch_device(job),
        batch_sizes=list(job.batch_sizes),
        threads=list(job.threads),
        time_limit_s=float(job.time_limit_seconds),
        **_plan_options(job),
    )
    watcher = _Watcher(job)
    started = time.monotonic()
    try:
        summary = run_job(plan, on_event=watcher.on_event, should_cancel=watcher.should_cancel)
        worlds = list(job.options.get("data_parallel", []))
        if worlds and summary.get("status") == "succeeded":
            left = float(job.time_limit_seconds) - (time.monotonic() - started)
            summary = {**summary, **_data_parallel(job, candidate, worlds, summary, left, watcher)}
    except Exception as exc:
        log.exception("calibration %s crashed", job_id)
        summary = {"status": "failed", "error": f"{type(exc).__name__}: {exc}"}
    return _finish(job, summary)


PLAN_OPTIONS = {"min_iterations", "min_seconds", "warmup", "allocator", "max_batch_size"}


def _plan_options(job: CalibrationJob) -> dict[str, Any]:
    """The user's options over the defaults; a doubling sweep never goes past the data set's own size,
    since no epoch can use a larger batch."""
    examples = int(job.recommendation.spec.get("data", {}).get("examples") or 4096)
    chosen = {k: v for k, v in job.options.items() if k in PLAN_OPTIONS}
    chosen["max_batch_size"] = max(1, min(int(chosen.get("max_batch_size", 4096)), examples))
    chosen.setdefault("min_seconds", settings.CALIBRATION_MIN_SECONDS)
    return chosen


def _data_parallel(
    job: CalibrationJob,
    candidate: dict[str, Any],
    worlds: list[int],
    summary: dict[str, Any],
    seconds_left: float,
    watcher: _Watcher,
) -> dict[str, Any]:
    """After the sweep: DDP ranks at each world size, each rank with the candidate's own batch size. The
    rows go to summary["data_parallel"]; a failure of this part fails the job with its reason."""
    from advisor.calibration import ScalingPlan, run_scaling

    if seconds_left <= 1:
        return {"status": "timed_out", "error": "no time was left for the data-parallel measurement"}
    options = _plan_options(job)
    plan = ScalingPlan(
        candidate,
        world_sizes=worlds,
        min_seconds=float(options["min_seconds"]),
        time_limit_s=seconds_left,
        # The sweep's "auto" ends at tuned wherever the default allocator costs anything (findings.py).
        allocator="tuned" if options.get("allocator", "auto") == "auto" else str(options["allocator"]),
    )
    result = run_scaling(plan, on_event=watcher.on_event_scaling, should_cancel=watcher.should_cancel)
    return {"data_parallel": result["rows"], "status": result["status"], "error": result["error"]}


def _torch_device(job: CalibrationJob) -> str:
    return "cpu" if job.device.kind == "cpu" else f"cuda:{job.device.index}"


class _Watcher:
    """Receives the runner's events in the worker and answers its cancel checks; doubles as the heartbeat."""

    def __init__(self, job: CalibrationJob) -> None:
        self.job = job
        self.last_check = 0.0
        self.cancelled = False

    def on_event(self, event: dict[str, Any]) -> None:
        if event["type"] == "result":
            record_result(job=self.job, event=event)
        elif event["type"] == "progress":
            total = max(int(event.get("total") or 1), 1)
            CalibrationJob.objects.filter(pk=self.job.pk).update(
                progress=min(1.0, int(event.get("done", 0)) / total),
                step=str(event.get("step", ""))[:300],
                heartbeat_at=timezone.now(),
            )

    def on_event_scaling(self, event: dict[str, Any]) -> None:
        if event["type"] == "progress" and "total" in event:  # not the ranks' own "timing" notes
            CalibrationJob.objects.filter(pk=self.job.pk).update(
                step=f"data parallel: {event['step']}"[:300], heartbeat_at=timezone.now()
            )

    def should_cancel(self) -> bool:
        now = time.monotonic()
        if now - self.last_check >= CHECK_EVERY_SECONDS:
            self.last_check = now
            CalibrationJob.objects.filter(pk=self.job.pk).update(heartbeat_at=timezone.now())
            self.cancelled = CalibrationJob.objects.filter(pk=self.job.pk, cancel_requested=True).exists()
        return self.cancelled


def _finish(job: CalibrationJob, summary: dict[str, Any]) -> str:
    status = {
        "succeeded": CalibrationJob.SUCCEEDED,
        "cancelled": CalibrationJob.CANCELLED,
    }.get(summary.get("status", ""), CalibrationJob.FAILED)
    error = str(summary.get("error") or "")
    if summary.get("status") == "timed_out":
        error = error or f"stopped at the time limit of {job.time_limit_seconds} s"
    estimate = measured_estimate(job) if status == CalibrationJob.SUCCEEDED else None
    if status == CalibrationJob.SUCCEEDED and estimate is None:
        status, error = CalibrationJob.FAILED, "no configuration could be measured (all out of memory?)"
    # Each configuration's result, with all its step samples, is in its Measurement row already.
    summary = {key: value for key, value in summary.items() if key != "results"}
    CalibrationJob.objects.filter(pk=job.pk, status=CalibrationJob.RUNNING).update(
        status=status,
        error=error,
        summary=summary,
        estimate=estimate,
        finished_at=timezone.now(),
        progress=1.0 if status == CalibrationJob.SUCCEEDED else F("progress"),
        step={"succeeded": "done", "cancelled": "cancelled", "failed": "failed"}[status],
    )
    return status


def record_result(*, job: CalibrationJob, event: dict[str, Any]) -> Measurement:
    result = event["result"]
    return Measurement.objects.create(
        job=job,
        batch_size=event["batch_size"],
        threads=event.get("threads"),
        allocator=event.get("allocator", "default"),
        status=result.get("status", "ok"),
        seconds_per_batch=result.get("seconds_per_batch") if result.get("status", "ok") == "ok" else None,
        result=result,
    )


def measured_estimate(job: CalibrationJob) -> dict[str, Any] | None:
    """Time to train at the set-up the user will train with: the candidate's own batch size (else the measured
    one nearest to it), at whichever thread count and allocator ran it fastest. The fastest configuration per
    example overall is in the job's summary; it may use a batch the training set-up did not choose."""
    ok = [m for m in job.measurements.all() if m.status == "ok" and m.seconds_per_batch]
    if not ok:
        return None
    planned = int(job.recommendation.result["candidates"][job.candidate]["training"]["batch_size"])
    nearest = min({m.batch_size for m in ok}, key=lambda b: (abs(math.log(b / planned)), b))
    best = min((m for m in ok if m.batch_size == nearest), key=lambda m: float(m.seconds_per_batch or 0))
    estimate = engine.measured_estimate(
        job.recommendation.result,
        job.candidate,
        seconds_per_batch=float(best.seconds_per_batch or 0),
        batch_size=best.batch_size,
    )
    return {
        **estimate,
        "measured_at": {
            "batch_size": best.batch_size,
            "threads": best.threads,
            "allocator": best.allocator,
            "device": job.device_id,
        },
    }
