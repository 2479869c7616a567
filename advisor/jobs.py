"""The one machinery of device jobs (calibrations, accuracy probes, and any later kind): sending with the
outbox, running (claim, watch, finish), cancelling, and the worker's upkeep of orphans and unsent jobs.

A kind of job is a DeviceJob model (advisor/models.py: the lifecycle fields and the conditional-UPDATE claim)
plus a JobKind below naming its Celery task and retry budget; it keeps only its own validation, its plan (what
it runs in a supervised child, advisor/calibration/supervisor.py) and the mapping of its result onto its row.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, Generic, TypeVar

from django.db import transaction
from django.db.models import F, QuerySet
from django.utils import timezone

from advisor import notify
from advisor.engine.remaining import StoredMark
from advisor.forecasts import add_mark
from advisor.models import DeviceJob, Refusal

log = logging.getLogger(__name__)

J = TypeVar("J", bound=DeviceJob)
W = TypeVar("W", bound="Watcher")
Event = dict[str, Any]

# Cancel checks and heartbeats hit the database; once a second is plenty for both.
CHECK_EVERY_SECONDS = 1.0
STEP_WHEN = {DeviceJob.SUCCEEDED: "done", DeviceJob.CANCELLED: "cancelled", DeviceJob.FAILED: "failed"}


class JobRefused(Exception):
    """A job request that must not be queued; `.errors` names the offending fields."""

    def __init__(self, errors: dict[str, list[str]]) -> None:
        super().__init__("; ".join(f"{k}: {' '.join(v)}" for k, v in errors.items()))
        self.errors = errors


def count_refusal(kind: str, errors: dict[str, list[str]]) -> None:
    """Count a refused submission by each field it names (the metrics' advisor_refusals_total)."""
    for reason in errors:
        row, _ = Refusal.objects.get_or_create(kind=kind, reason=reason[:100])
        Refusal.objects.filter(pk=row.pk).update(count=F("count") + 1)


class Conflict(Exception):
    """The request conflicts with the object's state (a finished job, a sample a probe still needs)."""


class JobFinished(Conflict):
    """Cancelling a job that already finished."""


@dataclass(frozen=True)
class JobKind(Generic[J]):
    """What the machinery needs to know of a kind of job: its model, the name it goes by in messages, its
    Celery task's name, how many times a job is started before an orphan is failed, and the extra Celery
    options of its message (time limits sized per job)."""

    model: type[J]
    noun: str
    task: str
    max_attempts: Callable[[], int]
    send_options: Callable[[J], Mapping[str, object]] = field(default=lambda job: {})
    orphan_noun: str = ""  # what a reaped job's reason calls it, when not its noun

    def publish(self, job: J) -> bool:
        return send(job, self.task, **self.send_options(job))


# --- sending -----------------------------------------------------------------------------------------------


def send(job: DeviceJob, task: str, **options: Any) -> bool:
    """Send the named task for the job to its device's queue and record it as sent. A job the broker did not
    take stays queued with sent_at empty (an outbox) and is sent again by the next worker heartbeat.

    Fails fast: one connection attempt (bounded by broker_connection_timeout and, for Redis, the socket
    timeouts in settings), no publish retries. kombu's default would retry connecting for the whole
    connection timeout with 2 s pauses, and the API answers 503 while the client waits."""
    from advisor.celery import app

    try:
        with app.producer_or_acquire() as producer:
            producer.connection.ensure_connection(max_retries=0)
            result = app.send_task(
                task, args=[job.pk], queue=job.device.queue, retry=False, producer=producer, **options
            )
    except Exception as exc:  # kombu raises transport-specific errors; all mean "not sent"
        log.warning("%s %s not sent, broker unreachable: %s", type(job).__name__, job.pk, exc)
        return False
    type(job)._default_manager.filter(pk=job.pk).update(
        sent_at=timezone.now(), options={**job.options, "task_id": result.id}
    )
    return True


def queue(kind: JobKind[J], job: J) -> J:
    """Save a new job and hand it to the broker once its transaction commits: a job rolled back is never
    sent, and one the broker refuses waits in the outbox."""
    with transaction.atomic():
        job.save()
        transaction.on_commit(lambda: kind.publish(job))
    return job


def resend_unsent(kind: JobKind[J], *, queues: list[str]) -> int:
    """Send again the queued jobs of these queues that the broker never took."""
    jobs = kind.model._default_manager.filter(
        status=DeviceJob.QUEUED, sent_at__isnull=True, device__queue__in=queues
    ).select_related("device")
    return sum(kind.publish(job) for job in jobs)


# --- cancelling --------------------------------------------------------------------------------------------


def cancel(kind: JobKind[J], job: J) -> J:
    """Queued: cancelled at once, and its task revoked (a message that still arrives finds nothing to
    claim). Running: the worker stops the child at its next check, keeping what was measured. Finished:
    JobFinished."""
    rows = kind.model._default_manager.filter(pk=job.pk)
    if rows.filter(status=DeviceJob.QUEUED).update(
        status=DeviceJob.CANCELLED, finished_at=timezone.now(), step="cancelled before it started"
    ):
        revoke(job.options.get("task_id"))
    elif not rows.filter(status=DeviceJob.RUNNING).update(cancel_requested=True):
        job.refresh_from_db()
        raise JobFinished(f"{kind.noun} {job.pk} already {job.status}")
    job.refresh_from_db()
    return job


def revoke(task_id: str | None) -> None:
    if not task_id:
        return
    from advisor.celery import app

    try:
        app.control.revoke(task_id)
    except Exception as exc:  # revocation is an optimisation; the claim already guards the job
        log.info("revoke of %s not broadcast: %s", task_id, exc)


# --- running -----------------------------------------------------------------------------------------------


class Watcher:
    """Receives a running job's events in the worker and answers the child's cancel checks; doubles as the
    heartbeat. Progress events are the machinery's; every other event goes to the kind's `on_other`."""

    def __init__(self, job: DeviceJob, on_other: Callable[[Event], None] | None = None) -> None:
        self.job = job
        # every kind's job: rows of its own model, whose fields (a probe's `results`) its kind updates
        self.rows: QuerySet[Any] = type(job)._default_manager.filter(pk=job.pk)
        self.on_other = on_other
        self.last_check = 0.0
        self.cancelled = False
        self.marks: list[StoredMark] = list(job.marks or [])
        self.started = job.started_at or timezone.now()

    def on_event(self, event: Event) -> None:
        if event["type"] == "progress":
            now = timezone.now()
            done, total = float(event.get("done", 0)), max(float(event.get("total") or 1), 1e-9)
            # each change of the finished steps is a mark the remaining-time estimator paces the rest by
            at = (now - self.started).total_seconds()
            chance = event.get("restart_chance")
            marked = add_mark(
                self.marks,
                at_s=at,
                done=done,
                total=total,
                restart=bool(event.get("restart")),
                restart_chance=None if chance is None else float(chance),
                threads=None if event.get("threads") is None else int(event["threads"]),
                step_left_s=None if event.get("step_left_s") is None else float(event["step_left_s"]),
            )
            if marked is not None:
                self.marks = marked
            self.rows.update(
                progress=min(1.0, done / total),
                step=str(event.get("step", ""))[:300],
                heartbeat_at=now,
                **({"marks": marked} if marked is not None else {}),
            )
        elif self.on_other is not None:
            self.on_other(event)

    def should_cancel(self) -> bool:
        now = time.monotonic()
        if now - self.last_check >= CHECK_EVERY_SECONDS:
            self.last_check = now
            self.rows.update(heartbeat_at=timezone.now())
            self.cancelled = self.rows.filter(cancel_requested=True).exists()
        return self.cancelled


def run_claimed(
    kind: JobKind[J],
    job_id: int,
    *,
    related: tuple[str, ...],
    watcher: Callable[[J], W],
    execute: Callable[[J, W], dict[str, Any]],
    conclude: Callable[[J, W, dict[str, Any]], str],
) -> str:
    """Claim the job with a conditional UPDATE (a re-delivered or duplicate message does nothing), run it
    under a watcher, and let the kind conclude from the outcome ({"status", "error", ...}; a crash is a
    failed outcome). Returns the job's final status, or 'skipped'."""
    if not kind.model.claim(job_id):
        log.info("%s %s not claimed (already taken, finished or cancelled)", kind.noun, job_id)
        return "skipped"
    job = kind.model._default_manager.select_related(*related).get(pk=job_id)
    watching = watcher(job)
    try:
        outcome = execute(job, watching)
    except Exception as exc:
        log.exception("%s %s crashed", kind.noun, job_id)
        outcome = {"status": "failed", "error": f"{type(exc).__name__}: {exc}"}
    return conclude(job, watching, outcome)


def final_status(outcome: dict[str, Any]) -> str:
    """The row's status for a run's outcome status (succeeded, cancelled; anything else failed)."""
    wanted = str(outcome.get("status", ""))
    return wanted if wanted in (DeviceJob.SUCCEEDED, DeviceJob.CANCELLED) else DeviceJob.FAILED


def finish(job: DeviceJob, *, status: str, error: str, **fields: Any) -> str:
    """Record the end of a running job with the kind's own fields; a job no longer running is left alone."""
    rows = type(job)._default_manager.filter(pk=job.pk, status=DeviceJob.RUNNING)
    ended = rows.update(
        status=status,
        error=error,
        finished_at=timezone.now(),
        progress=1.0 if status == DeviceJob.SUCCEEDED else F("progress"),
        step=STEP_WHEN[status],
        **fields,
    )
    if ended and status in (DeviceJob.SUCCEEDED, DeviceJob.FAILED):
        transaction.on_commit(lambda: notify.job_finished(job, status=status, error=error))
    return status


# --- the worker's upkeep -----------------------------------------------------------------------------------


def reap_orphans(kind: JobKind[J], *, device_ids: list[str], stale_after: float) -> list[int]:
    """Jobs left 'running' by a worker that died: queued again while attempts remain, else failed with the
    reason. On a worker's start every running job of its devices is an orphan (stale_after=0), since each
    device runs one job at a time and that worker is the only one consuming its queue."""
    model = kind.model
    cutoff = timezone.now() - timedelta(seconds=stale_after)
    jobs = model._default_manager.filter(
        device_id__in=device_ids, status=DeviceJob.RUNNING, heartbeat_at__lt=cutoff
    ).select_related("device")
    reaped = []
    for job in jobs:
        assert job.heartbeat_at is not None  # the filter: a heartbeat older than the cutoff
        reason = (
            f"the worker on {job.device_id} stopped while this {kind.orphan_noun or kind.noun} ran "
            f"(attempt {job.attempts}); "
            "no heartbeat since " + job.heartbeat_at.isoformat(timespec="seconds")
        )
        running = model._default_manager.filter(pk=job.pk, status=DeviceJob.RUNNING)
        if job.attempts < kind.max_attempts() and not job.cancel_requested:
            claimed = running.update(
                status=DeviceJob.QUEUED, sent_at=None, step=f"re-queued: {reason}", progress=0.0
            )
            if claimed:
                job.refresh_from_db()
                kind.publish(job)
        else:
            final = DeviceJob.CANCELLED if job.cancel_requested else DeviceJob.FAILED
            claimed = running.update(status=final, error=reason, finished_at=timezone.now())
            if claimed and final == DeviceJob.FAILED:
                notify.job_finished(job, status=final, error=reason)
        if claimed:
            log.warning("reaped %s %s: %s", kind.noun, job.pk, reason)
            reaped.append(job.pk)
    return reaped
