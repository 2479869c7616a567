"""What workers do about themselves: announce devices, beat, look after every kind of job on their queues
(recover orphans, resend the outbox; the machinery is advisor/jobs.py), and profile their idle devices again
(advisor/profiles.py keeps the median of the latest trusted profiles)."""

from __future__ import annotations

import json
import os
from datetime import datetime
from typing import TYPE_CHECKING, Any

from django.utils import timezone

from advisor import queueing
from advisor.engine.profile import trusted
from advisor.jobs import JobKind, reap_orphans, resend_unsent
from advisor.models import Device
from advisor.probe.services import PROBES
from advisor.services import CALIBRATIONS

if TYPE_CHECKING:  # torch's side: the worker's command detects the devices (advisor.calibration.devices)
    from advisor.calibration.devices import DetectedDevice


def job_kinds() -> tuple[JobKind[Any], ...]:
    """Every kind of job that runs on the device queues (they share them, so a device runs one job of any
    kind at a time)."""
    return (CALIBRATIONS, PROBES)


def upkeep(*, device_ids: list[str], queues: list[str], stale_after: float) -> None:
    """One heartbeat of a worker: its devices are seen, and every job kind's orphans and outbox looked after.
    stale_after=0 on a worker's start: every running job of its devices is then an orphan."""
    heartbeat(device_ids=device_ids)
    for kind in job_kinds():
        reap_orphans(kind, device_ids=device_ids, stale_after=stale_after)
        resend_unsent(kind, queues=queues)


# Set by `manage.py serve` on a worker it restarted: {"count", "reason", "at"}, kept in each device's details.
RESTART_ENV = "ADVISOR_WORKER_RESTART"


def register_devices(*, host: str, worker: str, devices: list[DetectedDevice]) -> list[Device]:
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
    """The one queue of a device: every kind of device job (calibrations, probes) goes there."""
    return f"device.{device_id}"


def heartbeat(*, device_ids: list[str]) -> None:
    Device.objects.filter(id__in=device_ids).update(last_seen=timezone.now())


# the task a worker sends to its own device queue to profile the device again: it runs between jobs, never
# beside one (the queue's concurrency is 1), so that neither times the other
REFRESH_TASK = "advisor.refresh_profile"
# after a profile taken under contention (not trusted), and until the device has FEW trusted profiles to take
# the median of, the worker profiles again after this share of the period
SOONER = 0.25
FEW = 3


def reprofile_due(device: Device, *, now: datetime, every: float) -> bool:
    """Whether the device is due to be profiled again: it has a profile, its latest profiling (trusted or
    not) is `every` seconds old (SOONER of that after an untrusted one or while it has fewer than FEW trusted
    ones), and no job waits or runs on it. `every` 0: never."""
    if every <= 0 or not device.profile:
        return False
    history = device.profile_history or [device.profile]
    latest = history[-1]
    age = (now - datetime.fromisoformat(str(latest["profiled_at"]))).total_seconds()
    settled = trusted(latest) and sum(trusted(p) for p in history) >= FEW
    return age >= (every if settled else every * SOONER) and queueing.idle(device.pk)


def reprofile_idle(
    *, device_ids: list[str], now: datetime, every: float, sent: dict[str, float]
) -> list[str]:
    """Send the refresh task to each device due (reprofile_due) unless one was sent less than SOONER x
    `every` ago (`sent`: device id -> when, the beat's own memory); the ids sent to."""
    from advisor.celery import app

    done = []
    for device in Device.objects.filter(id__in=device_ids):
        last = sent.get(device.pk)
        if last is not None and now.timestamp() - last < every * SOONER:
            continue
        if reprofile_due(device, now=now, every=every):
            app.send_task(REFRESH_TASK, args=[device.pk], queue=device.queue)
            sent[device.pk] = now.timestamp()
            done.append(device.pk)
    return done
