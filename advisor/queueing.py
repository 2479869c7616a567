"""A device's queue, every kind of job together, in fair-share order (engine.fairshare.fair_order): the order
its worker claims them in (advisor/dispatch.py), and each queued job's position and expected start for the
job pages, the API and the fleet page. Read-only: the claim itself is each kind's conditional UPDATE."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TypedDict

from django.db.models import Max
from django.utils import timezone

from advisor import forecasts
from advisor.engine.fairshare import Waiting, fair_order, forecast
from advisor.engine.remaining import Remaining, start_interval
from advisor.models import CalibrationJob, Device, DeviceJob
from advisor.probe.models import ProbeJob

# every kind of job on the device queues, by the noun its JobKind goes by (workers.job_kinds())
KINDS: dict[str, type[CalibrationJob] | type[ProbeJob]] = {"calibration": CalibrationJob, "probe": ProbeJob}
Key = tuple[str, int]


class Place(TypedDict):
    """A queued job's place, as the API's `queue` field gives it."""

    position: int
    ahead: int
    expected_start: datetime | None
    starts_in_seconds: float | None
    # the 90% range of the wait, [low, high] seconds (engine.remaining.START_RATIOS); None while drained
    interval: list[float] | None
    draining: bool


class Left(TypedDict):
    """A running job's remaining time, as the API's `remaining` field gives it."""

    remaining_seconds: float
    expected_finish: datetime
    basis: str
    interval: list[float]  # the 90% range of the time that will actually remain, [low, high] seconds


@dataclass(frozen=True)
class Queued:
    kind: str
    job: DeviceJob
    position: int  # 1: next to start
    expected_s: float  # how long it is expected to run
    starts_in_s: float | None  # None while the device is drained
    expected_start: datetime | None


@dataclass
class DeviceQueue:
    device: Device
    running: DeviceJob | None = None
    running_kind: str = ""
    remaining: Remaining | None = None
    queued: list[Queued] = field(default_factory=list)

    def slot(self, kind: str, pk: int) -> Queued | None:
        return next((q for q in self.queued if q.kind == kind and q.job.pk == pk), None)


def _queued(device_id: str) -> list[tuple[str, DeviceJob]]:
    found: list[tuple[str, DeviceJob]] = []
    for kind, model in KINDS.items():
        rows = model._default_manager.filter(
            device_id=device_id, status=DeviceJob.QUEUED, cancel_requested=False
        )
        found += [(kind, job) for job in rows.select_related("owner")]
    return found


def _last_use(device_id: str) -> dict[int, float]:
    """When each user's latest job on the device started (any kind), as a timestamp."""
    used: dict[int, float] = {}
    for model in KINDS.values():
        rows = (
            model._default_manager.filter(device_id=device_id, started_at__isnull=False)
            .values("owner")
            .annotate(last=Max("started_at"))
        )
        for row in rows:
            used[row["owner"]] = max(used.get(row["owner"], 0.0), row["last"].timestamp())
    return used


def _peers_running(job: DeviceJob) -> bool:
    """A rank of a spread calibration (advisor/spread.py) whose peers already run, waiting for it."""
    spread = job.options.get("spread") if isinstance(job, CalibrationJob) else None
    if not spread:
        return False
    peers = CalibrationJob.objects.filter(options__spread__group=spread["group"], status=DeviceJob.RUNNING)
    return peers.exists()


def _waiting(kind: str, job: DeviceJob, paces: dict[str, float]) -> Waiting:
    return Waiting(
        key=(kind, int(job.pk)),
        owner=job.owner_id,
        queued_at=job.created_at.timestamp(),
        expected_s=forecasts.expected_seconds(job, at_pace=paces[kind]),
        first=_peers_running(job),
    )


def claim_order(device_id: str, *, hint: Key | None = None) -> list[Key]:
    """The queued jobs of the device its worker may claim now, best first. Only jobs handed to the broker
    (and the one whose message is being handled, `hint`) count: each claim uses up one message, so a job
    still in the outbox must not take the message of one that was sent."""
    jobs = [(k, j) for k, j in _queued(device_id) if j.sent_at is not None or (k, j.pk) == hint]
    paces = dict.fromkeys(KINDS, 1.0)  # the order does not depend on durations
    order = fair_order([_waiting(k, j, paces) for k, j in jobs], _last_use(device_id))
    return [w.key for w in order]


def device_queue(device: Device, *, now: datetime | None = None) -> DeviceQueue:
    """The running job with its remaining time, then every queued job in the order the worker will take
    them, each with its expected start (the running job's remaining time and the expected durations of the
    jobs before it, at the device's recent pace)."""
    now = now or timezone.now()
    paces = {kind: forecasts.pace(model, device.pk) for kind, model in KINDS.items()}
    view = DeviceQueue(device)
    for kind, model in KINDS.items():
        running = (
            model._default_manager.filter(device_id=device.pk, status=DeviceJob.RUNNING)
            .select_related("owner")
            .order_by("-started_at")
            .first()
        )
        if running is not None and (view.running is None or _later(running, view.running)):
            view.running, view.running_kind = running, kind
    busy = 0.0
    if view.running is not None:
        view.remaining = forecasts.left(view.running, at_pace=paces[view.running_kind], now=now)
        busy = view.remaining.seconds
    jobs = {(k, j.pk): (k, j) for k, j in _queued(device.pk)}
    waiting = [_waiting(k, j, paces) for k, j in jobs.values()]
    expected = {w.key: w.expected_s for w in waiting}
    for slot in forecast(waiting, _last_use(device.pk), busy_for_s=busy, drained=device.draining):
        kind, job = jobs[slot.key]
        start = None if slot.starts_in_s is None else now + timedelta(seconds=slot.starts_in_s)
        view.queued.append(Queued(kind, job, slot.position, expected[slot.key], slot.starts_in_s, start))
    return view


def _later(a: DeviceJob, b: DeviceJob) -> bool:
    return bool(a.started_at and (b.started_at is None or a.started_at > b.started_at))


class Forecaster:
    """Device queues computed once per request (a list of jobs shares its devices')."""

    def __init__(self, now: datetime | None = None) -> None:
        self.now = now or timezone.now()
        self.queues: dict[str, DeviceQueue] = {}

    def queue(self, device: Device) -> DeviceQueue:
        if device.pk not in self.queues:
            self.queues[device.pk] = device_queue(device, now=self.now)
        return self.queues[device.pk]

    def place(self, kind: str, job: DeviceJob) -> Place | None:
        """A queued job's place for the API: position, jobs ahead, expected start; None once it started."""
        if job.status != DeviceJob.QUEUED:
            return None
        view = self.queue(job.device)
        slot = view.slot(kind, int(job.pk))
        if slot is None:  # cancelled while asked, or not yet visible
            return None
        return {
            "position": slot.position,
            "ahead": slot.position - 1 + (1 if view.running is not None else 0),
            "expected_start": slot.expected_start,
            "starts_in_seconds": None if slot.starts_in_s is None else round(slot.starts_in_s, 1),
            "interval": None
            if slot.starts_in_s is None
            else [round(s, 1) for s in start_interval(slot.starts_in_s)],
            "draining": job.device.draining,
        }

    def finish(self, kind: str, job: DeviceJob) -> Left | None:
        """A running job's remaining time for the API; None unless it runs."""
        if job.status != DeviceJob.RUNNING:
            return None
        view = self.queue(job.device)
        if view.running is not None and view.running.pk == job.pk and view.running_kind == kind:
            left = view.remaining
        else:  # another worker's running job on the same device row (should not happen): its own estimate
            left = forecasts.left(job, at_pace=forecasts.pace(KINDS[kind], job.device_id), now=self.now)
        assert left is not None
        return {
            "remaining_seconds": round(left.seconds, 1),
            "expected_finish": self.now + timedelta(seconds=left.seconds),
            "basis": left.basis,
            "interval": [round(left.low, 1), round(left.high, 1)],
        }


def idle(device_id: str) -> bool:
    """No job of any kind queued or running on the device (a worker profiles it again only then)."""
    return not any(
        model._default_manager.filter(
            device_id=device_id, status__in=(DeviceJob.QUEUED, DeviceJob.RUNNING)
        ).exists()
        for model in KINDS.values()
    )
