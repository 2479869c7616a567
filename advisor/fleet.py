"""The fleet, for staff: every device with its worker's heartbeat and torch, the running job and its owner,
its queue in fair-share order, recent failures and its profile's age; draining a device and undoing it."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.utils import timezone
from django.utils.dateparse import parse_datetime

from advisor.models import Device, DeviceJob
from advisor.queueing import KINDS, DeviceQueue, device_queue
from advisor.workers import job_kinds

RECENT_FAILURES = 5


# --- writes ------------------------------------------------------------------------------------------------


def drain(*, device: Device) -> Device:
    """The device's worker finishes the job it runs and claims no other (advisor/dispatch.py); its queued
    jobs wait. Messages that arrive meanwhile are used up without a claim."""
    Device.objects.filter(pk=device.pk).update(draining=True)
    device.refresh_from_db()
    return device


def undrain(*, device: Device) -> Device:
    """Take jobs again: each queued job of the device is published once more, since the messages that came
    while it was drained claimed nothing (a surplus message later finds nothing to claim)."""
    Device.objects.filter(pk=device.pk).update(draining=False)
    for kind in job_kinds():
        queued = kind.model._default_manager.filter(device=device, status=DeviceJob.QUEUED)
        for job in queued.select_related("device"):
            kind.publish(job)
    device.refresh_from_db()
    return device


# --- reads -------------------------------------------------------------------------------------------------


@dataclass
class Failure:
    kind: str
    job: DeviceJob
    owner: str


@dataclass
class DeviceRow:
    device: Device
    heartbeat_age_s: float
    torch: str
    profile_age_s: float | None
    queue: DeviceQueue
    failures: list[Failure] = field(default_factory=list)


def fleet(*, now: datetime | None = None) -> list[DeviceRow]:
    now = now or timezone.now()
    rows = []
    for device in Device.objects.all():
        rows.append(
            DeviceRow(
                device=device,
                heartbeat_age_s=(now - device.last_seen).total_seconds(),
                torch=str((device.details or {}).get("torch") or device.torch_version or ""),
                profile_age_s=profile_age(device, now),
                queue=device_queue(device, now=now),
                failures=recent_failures(device),
            )
        )
    return rows


def profile_age(device: Device, now: datetime) -> float | None:
    measured: Any = (device.profile or {}).get("profiled_at")
    at = parse_datetime(measured) if isinstance(measured, str) else None
    return None if at is None else (now - at).total_seconds()


def recent_failures(device: Device, limit: int = RECENT_FAILURES) -> list[Failure]:
    found: list[Failure] = []
    for kind, model in KINDS.items():
        failed = model._default_manager.filter(device=device, status=DeviceJob.FAILED).select_related("owner")
        found += [Failure(kind, job, job.owner.username) for job in failed.order_by("-finished_at")[:limit]]
    found.sort(key=lambda f: f.job.finished_at or f.job.created_at, reverse=True)
    return found[:limit]
