"""What workers do about themselves: announce devices, beat, resend the outbox, recover orphaned jobs."""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.utils import timezone

from advisor.models import CalibrationJob, Device, DeviceJob
from advisor.services import publish

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class JobKind:
    """A kind of job that runs on the device queues and needs the worker's upkeep: orphans recovered, the
    outbox resent. Calibrations are one; other apps register theirs in their AppConfig.ready()."""

    name: str
    reap_orphans: Callable[..., list[int]]
    resend_unsent: Callable[..., int]


JOB_KINDS: dict[str, JobKind] = {}


def register_job_kind(kind: JobKind) -> None:
    JOB_KINDS[kind.name] = kind


def upkeep(*, device_ids: list[str], queues: list[str], stale_after: float) -> None:
    """One heartbeat of a worker: its devices are seen, and every job kind's orphans and outbox looked after.
    stale_after=0 on a worker's start: every running job of its devices is then an orphan."""
    heartbeat(device_ids=device_ids)
    for kind in JOB_KINDS.values():
        kind.reap_orphans(device_ids=device_ids, stale_after=stale_after)
        kind.resend_unsent(queues=queues)


def resend_unsent(*, queues: list[str]) -> int:
    jobs = CalibrationJob.objects.filter(
        status=CalibrationJob.QUEUED, sent_at__isnull=True, device__queue__in=queues
    ).select_related("device")
    return sum(publish(job) for job in jobs)


# Set by `manage.py serve` on a worker it restarted: {"count", "reason", "at"}, kept in each device's details.
RESTART_ENV = "ADVISOR_WORKER_RESTART"


def register_devices(*, host: str, worker: str, devices: list[dict[str, Any]]) -> list[Device]:
    rows = []
    now = timezone.now()
    restart = os.environ.get(RESTART_ENV)
    for dev in devices:
        if restart:
            dev = {**dev, "restart": json.loads(restart)}
        ident = f"{host}-{dev['kind']}{dev.get('index', 0)}"
        row, _ = Device.objects.update_or_create(
            id=ident,
            defaults={
                "host": host,
                "kind": dev["kind"],
                "index": dev.get("index", 0),
                "name": dev.get("name", dev["kind"]),
                "cores": dev.get("cores"),
                "threads": dev.get("threads"),
                "memory_bytes": dev.get("memory_bytes"),
                "queue": device_queue(ident),
                "worker": worker,
                "details": dev,
                "last_seen": now,
            },
        )
        rows.append(row)
    return rows


def device_queue(device_id: str) -> str:
    return f"calibrate.{device_id}"


def heartbeat(*, device_ids: list[str]) -> None:
    Device.objects.filter(id__in=device_ids).update(last_seen=timezone.now())


def reap_orphans(*, device_ids: list[str], stale_after: float) -> list[int]:
    """Calibrations left running by a worker that died (see reap_orphaned_jobs)."""
    return reap_orphaned_jobs(
        CalibrationJob,
        publish,
        device_ids=device_ids,
        stale_after=stale_after,
        max_attempts=settings.CALIBRATION_MAX_ATTEMPTS,
        noun="job",
    )


def reap_orphaned_jobs(
    model: type[DeviceJob],
    publish_job: Callable[[Any], bool],
    *,
    device_ids: list[str],
    stale_after: float,
    max_attempts: int,
    noun: str,
) -> list[int]:
    """Jobs left 'running' by a worker that died: queued again while attempts remain, else failed with the
    reason. On a worker's start every running job of its devices is an orphan (stale_after=0), since each
    device runs one job at a time and that worker is the only one consuming its queue."""
    cutoff = timezone.now() - timedelta(seconds=stale_after)
    jobs = model.objects.filter(  # type: ignore[attr-defined]
        device_id__in=device_ids, status=model.RUNNING, heartbeat_at__lt=cutoff
    ).select_related("device")
    reaped = []
    for job in jobs:
        reason = (
            f"the worker on {job.device_id} stopped while this {noun} ran (attempt {job.attempts}); "
            "no heartbeat since " + job.heartbeat_at.isoformat(timespec="seconds")
        )
        running = model.objects.filter(pk=job.pk, status=model.RUNNING)  # type: ignore[attr-defined]
        if job.attempts < max_attempts and not job.cancel_requested:
            claimed = running.update(
                status=model.QUEUED, sent_at=None, step=f"re-queued: {reason}", progress=0.0
            )
            if claimed:
                job.refresh_from_db()
                publish_job(job)
        else:
            final = model.CANCELLED if job.cancel_requested else model.FAILED
            claimed = running.update(status=final, error=reason, finished_at=timezone.now())
        if claimed:
            log.warning("reaped %s %s: %s", noun, job.pk, reason)
            reaped.append(job.pk)
    return reaped


register_job_kind(JobKind("calibration", reap_orphans=reap_orphans, resend_unsent=resend_unsent))
