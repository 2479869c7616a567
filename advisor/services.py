"""The use cases: views, the API, the CLI and Celery tasks call these (keyword arguments) for every write,
with the refusals that guard them. What they and the views read comes from the selectors (advisor/queries.py);
how a recommendation is served (`queries.recommendation_payload`) is one of those reads."""

from __future__ import annotations

import contextlib
import logging
from typing import Any, TypedDict

from django.conf import settings
from django.contrib.auth.models import User
from django.db import IntegrityError

from advisor import advice, contract, engine, forecasts, queries
from advisor.contract import Candidate
from advisor.engine.families import family_of
from advisor.engine.units import duration, nbytes, plural
from advisor.jobs import JobFinished as JobFinished  # callers catch it as services.JobFinished
from advisor.jobs import JobKind, JobRefused, cancel, count_refusal, queue
from advisor.models import CalibrationJob, Device, DeviceJob, Recommendation
from advisor.probe import conf as probe_conf

log = logging.getLogger(__name__)

MAX_BATCH_SIZE = 65536


class CalibrationRefused(JobRefused):
    """A calibration request that must not be queued; `.errors` names the offending fields."""


class MessageLimits(TypedDict):
    """Celery's time limits of one message, in seconds."""

    soft_time_limit: float
    time_limit: float


class _CalibrationRequest(TypedDict):
    """What a calibration is asked for, as check_calibration_limits checks it and the job keeps it."""

    recommendation: Recommendation
    candidate: int
    device: Device
    batch_sizes: list[int]
    threads: list[int]
    time_limit_seconds: int


def message_limits(job: DeviceJob) -> MessageLimits:
    """Celery's own time limits of a device queue's message, a backstop above every job's own (its child is
    stopped by the runner). A message may run a job of another kind (fair share, advisor/dispatch.py), so
    they cover the longest job of any kind."""
    from advisor.probe.learning.child import STARTUP_LIMIT_S

    longest = max(settings.CALIBRATION_MAX_SECONDS, probe_conf.value("PROBE_MAX_SECONDS") + STARTUP_LIMIT_S)
    return {"soft_time_limit": longest + 60, "time_limit": longest + 120}


# A calibration runs advisor.run_calibration (advisor/tasks.py) on its device's queue; an orphan is re-queued
# until CALIBRATION_MAX_ATTEMPTS starts.
CALIBRATIONS: JobKind[CalibrationJob] = JobKind(
    CalibrationJob,
    noun="calibration",
    task="advisor.run_calibration",
    max_attempts=lambda: int(settings.CALIBRATION_MAX_ATTEMPTS),
    send_options=message_limits,
    orphan_noun="job",
)


def queued_refusal(owner: User, *, adding: int = 1) -> dict[str, list[str]]:
    """{"queue": [why]} when `adding` more jobs would take the owner past JOBS_QUEUED_PER_USER queued jobs of
    any kind (a shared device serves users in turn; this bounds how many one user keeps waiting), else {}."""
    most = int(settings.JOBS_QUEUED_PER_USER)
    queued = queries.queued_jobs(owner)
    if queued + adding <= most:
        return {}
    return {
        "queue": [
            f"you have {queued} jobs queued and may have {most} waiting at once (JOBS_QUEUED_PER_USER); "
            "wait for one to start or cancel one"
        ]
    }


# --- recommendations ---------------------------------------------------------------------------------------


def advise(*, owner: User, spec: dict[str, Any], device: Device | None = None) -> Recommendation:
    """Validate the spec through the engine and store its answer, timed from `device`'s profile when it has
    one. Raises engine.SpecError on bad input."""
    result = advice.recommend(spec, device)
    return Recommendation.objects.create(
        owner=owner, spec=result["spec"], result=result, engine_version=engine.ENGINE_VERSION
    )


# --- calibration jobs --------------------------------------------------------------------------------------


def submit_calibration(
    *,
    owner: User,
    recommendation: Recommendation,
    candidate: int,
    device: Device,
    batch_sizes: list[int] | None = None,
    threads: list[int] | None = None,
    time_limit_seconds: int | None = None,
    idempotency_key: str = "",
    options: dict[str, Any] | None = None,
    data_parallel: list[int] | None = None,
) -> tuple[CalibrationJob, bool]:
    """Queue a calibration on the device's own queue; returns (job, created). With an idempotency key already
    used by this owner, returns that job instead of queuing another."""
    if idempotency_key:
        existing = CalibrationJob.objects.filter(owner=owner, idempotency_key=idempotency_key).first()
        if existing is not None:
            return existing, False
    request: _CalibrationRequest = {
        "recommendation": recommendation,
        "candidate": candidate,
        "device": device,
        "batch_sizes": list(batch_sizes or []),
        "threads": list(threads or []),
        "time_limit_seconds": time_limit_seconds or settings.CALIBRATION_DEFAULT_SECONDS,
    }
    try:
        check_calibration_limits(**request, data_parallel=list(data_parallel or []))
        refusal = queued_refusal(owner)
        if refusal:
            raise CalibrationRefused(refusal)
    except CalibrationRefused as exc:
        count_refusal("calibration", exc.errors)
        raise
    options = {**(options or {}), **({"data_parallel": sorted(set(data_parallel))} if data_parallel else {})}
    job = CalibrationJob(owner=owner, idempotency_key=idempotency_key, options=options, **request)
    job.work_plan = forecasts.calibration_work_plan(job)
    try:
        queue(CALIBRATIONS, job)
    except IntegrityError:
        # A concurrent retry with the same key won the race.
        return CalibrationJob.objects.get(owner=owner, idempotency_key=idempotency_key), False
    return job, True


def measure_again(*, owner: User, job: CalibrationJob) -> CalibrationJob:
    """The same calibration (recommendation, candidate, device, batches, threads, limit, options) queued
    again, as the page offers where a sweep measured unreliably; once per job (its idempotency key), so a
    second click opens the same new job. A calibration spread over several devices is submitted again
    through the API."""
    if job.options.get("spread"):
        raise CalibrationRefused(
            {"devices": ["a calibration over several devices is submitted again by POST"]}
        )
    options = {k: v for k, v in job.options.items() if k != "data_parallel"}
    again, _ = submit_calibration(
        owner=owner,
        recommendation=job.recommendation,
        candidate=job.candidate,
        device=job.device,
        batch_sizes=list(job.batch_sizes),
        threads=list(job.threads),
        time_limit_seconds=job.time_limit_seconds,
        idempotency_key=f"again-{job.pk}",
        options=options,
        data_parallel=list(job.options.get("data_parallel") or []),
    )
    return again


def check_calibration_limits(
    *,
    recommendation: Recommendation,
    candidate: int,
    device: Device,
    batch_sizes: list[int],
    threads: list[int],
    time_limit_seconds: int,
    data_parallel: list[int] | None = None,
) -> None:
    """Refuse, before queuing, what would misuse a shared device or cannot run at all."""
    errors: dict[str, list[str]] = {}
    candidates = recommendation.result["candidates"]
    if not 0 <= candidate < len(candidates):
        raise CalibrationRefused({"candidate": [f"must be between 0 and {len(candidates) - 1}"]})
    cand = candidates[candidate]
    if not device.online:
        errors["device"] = [
            f"device {device.id} is offline (its worker has not been seen since {device.last_seen})"
        ]
    bad_batches = [b for b in batch_sizes if not isinstance(b, int) or not 1 <= b <= MAX_BATCH_SIZE]
    if bad_batches:
        errors["batch_sizes"] = [f"each batch size must be an integer from 1 to {MAX_BATCH_SIZE}"]
    max_threads = device.threads or device.cores or 1
    if device.kind == "cpu" and any(not isinstance(t, int) or not 1 <= t <= max_threads for t in threads):
        errors["threads"] = [f"each thread count must be an integer from 1 to {max_threads} on {device.name}"]
    if data_parallel:
        errors.update(_data_parallel_errors(device, cand, data_parallel))
    if not 1 <= time_limit_seconds <= settings.CALIBRATION_MAX_SECONDS:
        errors["time_limit_seconds"] = [f"must be from 1 to {settings.CALIBRATION_MAX_SECONDS} seconds"]
    too_big = parameters_refusal(cand)
    if too_big:
        errors["candidate"] = [too_big]
    if device.memory_bytes and not bad_batches:
        for b in batch_sizes or [cand["training"]["batch_size"]]:
            need = engine.memory_for(cand, batch_size=b, device="cuda" if device.kind == "cuda" else "cpu")[
                "total"
            ]
            if need > device.memory_bytes:
                errors.setdefault("batch_sizes", []).append(
                    f"batch {b} needs about {nbytes(need)}, more than {device.name}'s "
                    f"{nbytes(device.memory_bytes)}"
                )
                break
    if batch_sizes and not bad_batches and "threads" not in errors and "time_limit_seconds" not in errors:
        runs = len(threads) if threads else (max_threads if device.kind == "cpu" else 1)
        floor = sweep_seconds_floor(recommendation.result, candidate, batch_sizes=batch_sizes, runs=runs)
        if floor > time_limit_seconds:
            configurations = len(batch_sizes) * runs
            errors["time_limit_seconds"] = [
                f"measuring {plural(configurations, 'configuration')} takes at least {duration(floor)}, "
                f"more than the limit of {duration(time_limit_seconds)}: measure fewer batch sizes or thread "
                "counts, or allow more time"
            ]
    if errors:
        raise CalibrationRefused(errors)


def _data_parallel_errors(device: Device, cand: Candidate, worlds: list[int]) -> dict[str, list[str]]:
    """World sizes a data-parallel calibration can run: on a CPU its ranks share the device's physical cores
    (one at least each, gloo); on a GPU every rank has a GPU of its own (NCCL), rank 0 the job's device and
    the others the rest of the GPUs its worker sees (host_gpus)."""
    no_ddp = ddp_refusal(cand)
    if no_ddp:
        return {"data_parallel": [no_ddp]}
    if device.kind == "cpu":
        most, what = device.cores or 1, f"the cores of {device.name}"
    else:
        most, what = queries.host_gpus(device), f"the GPUs {device.worker or device.host}'s worker sees"
    if any(not isinstance(w, int) or isinstance(w, bool) or not 1 <= w <= most for w in worlds):
        return {"data_parallel": [f"each world size must be an integer from 1 to {most}, {what}"]}
    return {}


def parameters_refusal(cand: Candidate) -> str | None:
    """Why this server will not build the candidate (CALIBRATION_MAX_PARAMETERS), or None."""
    if cand["parameters"] <= settings.CALIBRATION_MAX_PARAMETERS:
        return None
    return (
        f"{cand['parameters']:,} parameters exceed this server's cap of "
        f"{settings.CALIBRATION_MAX_PARAMETERS:,} (CALIBRATION_MAX_PARAMETERS)"
    )


def ddp_refusal(cand: Candidate) -> str | None:
    """Why the candidate cannot train data-parallel, or None."""
    if family_of(cand).step.hand_gradients:
        return f"{cand['family']} trains with CD-1, whose gradients DDP does not reduce"
    return None


# A measuring child's start (a fresh interpreter importing torch) before the first configuration.
CHILD_START_SECONDS = 3.0


def sweep_seconds_floor(
    result: contract.Recommendation, candidate: int, *, batch_sizes: list[int], runs: int
) -> float:
    """The least a sweep can take: each configuration times at least CALIBRATION_MIN_SECONDS and its warm-up
    steps, at the engine's analytic pace (an optimistic one, so only sweeps that cannot fit are refused)."""
    total = CHILD_START_SECONDS
    for b in batch_sizes:
        per_batch = float(engine.estimate_for(result, candidate, batch_size=b)["seconds_per_batch"])
        total += runs * (max(settings.CALIBRATION_MIN_SECONDS, 5 * per_batch) + 2 * per_batch)
    return total


def publish(job: CalibrationJob) -> bool:
    """Hand the calibration to the broker on its device's queue (see jobs.send)."""
    return CALIBRATIONS.publish(job)


def delivered(job: CalibrationJob, *, created: bool) -> bool:
    """After submit_calibration: is the job with the broker (or past needing it)? A new job was published when
    its transaction committed (callers outside an atomic block: at once); a job found by its idempotency key
    that is still unsent gets one more try now, so a client retrying after a 503 sends it."""
    job.refresh_from_db()
    if job.sent_at is not None or job.status != CalibrationJob.QUEUED:
        return True
    if created or not publish(job):
        return False
    job.refresh_from_db()
    return True


def idempotency_conflict(
    job: CalibrationJob,
    *,
    recommendation: Recommendation,
    candidate: int,
    device: Device,
    batch_sizes: list[int],
    threads: list[int],
) -> str | None:
    """A reused idempotency key must come with the same request; say how it differs, or None."""
    asked = (recommendation.pk, candidate, device.pk, list(batch_sizes), list(threads))
    stored = (job.recommendation_id, job.candidate, job.device_id, list(job.batch_sizes), list(job.threads))
    if asked == stored:
        return None
    return f"this Idempotency-Key was used for calibration {job.pk} with a different request"


def cancel_calibration(*, job: CalibrationJob) -> CalibrationJob:
    """Queued: cancelled at once and its task revoked. Running: the runner stops the measuring child at its
    next check. Finished: JobFinished."""
    spread = job.options.get("spread")
    if spread:  # one spread calibration (advisor/spread.py): cancelling any of its jobs cancels them all
        others = CalibrationJob.objects.filter(options__spread__group=spread["group"]).exclude(pk=job.pk)
        for other in others:
            with contextlib.suppress(JobFinished):
                cancel(CALIBRATIONS, other)
    return cancel(CALIBRATIONS, job)
