"""What workers do about themselves: announce devices, beat, and look after every kind of job on their
queues (recover orphans, resend the outbox; the machinery is advisor/jobs.py)."""

from __future__ import annotations

import json
import os
from typing import Any

from django.utils import timezone

from advisor.jobs import JobKind, reap_orphans, resend_unsent
from advisor.models import Device
from advisor.probe.services import PROBES
from advisor.services import CALIBRATIONS


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
    """The one queue of a device: every kind of device job (calibrations, probes) goes there."""
    return f"device.{device_id}"


def heartbeat(*, device_ids: list[str]) -> None:
    Device.objects.filter(id__in=device_ids).update(last_seen=timezone.now())
