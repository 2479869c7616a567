"""What the advisor stores: recommendations, devices that workers offer, calibration jobs, measurements."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, TypeVar

from django.conf import settings
from django.db import models
from django.db.models import F, QuerySet
from django.utils import timezone

from advisor.jsonenc import FastEncoder

_Row = TypeVar("_Row", bound=models.Model)


def visible_to(user: Any, rows: QuerySet[_Row]) -> QuerySet[_Row]:
    """The one ownership rule of the API, the pages and the probe: users see only their own rows (others' are
    answered as not found, so their ids are not disclosed); staff see everyone's."""
    return rows if user.is_staff else rows.filter(owner=user)


def online_since(now: datetime | None = None) -> datetime:
    """A device seen after this is online: its worker beats every WORKER_HEARTBEAT_SECONDS, and three missed
    beats (and two seconds of slack) mean it is gone."""
    period = settings.WORKER_HEARTBEAT_SECONDS
    return (now or timezone.now()) - timedelta(seconds=3 * period + 2)


class Device(models.Model):
    """A CPU or GPU a live worker offers. Rows outlive their worker: a stale heartbeat means offline."""

    KIND_CHOICES = [("cpu", "CPU"), ("cuda", "CUDA GPU")]

    id = models.CharField(primary_key=True, max_length=200)  # "<host>-cpu0", "<host>-cuda1"
    host = models.CharField(max_length=200)
    kind = models.CharField(max_length=8, choices=KIND_CHOICES)
    index = models.PositiveIntegerField(default=0)
    name = models.CharField(max_length=300)
    cores = models.PositiveIntegerField(null=True, blank=True)
    threads = models.PositiveIntegerField(null=True, blank=True)
    memory_bytes = models.BigIntegerField(null=True, blank=True)
    queue = models.CharField(max_length=250, unique=True)
    worker = models.CharField(max_length=250, blank=True)
    details = models.JSONField(default=dict, blank=True)
    # engine.profile.DeviceProfile (calibration.profile measures it); null until the device is profiled
    profile = models.JSONField(null=True, blank=True)
    torch_version = models.CharField(
        max_length=100, blank=True
    )  # of the profile: a new torch needs a new one
    processor = models.CharField(max_length=300, blank=True)  # the profiled processor or GPU model
    # its latest profiles, newest last, untrusted ones (taken under contention) too: `profile` is the median
    # of the trusted ones (advisor/profiles.py record_profile, engine.profile.merge)
    profile_history = models.JSONField(default=list, blank=True)
    registered_at = models.DateTimeField(default=timezone.now)
    last_seen = models.DateTimeField(default=timezone.now)
    # drained by staff (the fleet page): its worker ends the job it runs, then claims none until undrained
    draining = models.BooleanField(default=False)

    class Meta:
        ordering = ["host", "kind", "index"]

    def __str__(self) -> str:
        return f"{self.id} ({self.name})"

    @property
    def online(self) -> bool:
        return self.last_seen > online_since()


class TimeModel(models.Model):
    """The learned correction of one device's profiled times (advisor.engine.learned), refitted after each
    finished calibration on it: a new version each time, with its cross-validated error."""

    device = models.ForeignKey(Device, on_delete=models.CASCADE, related_name="time_models")
    version = models.PositiveIntegerField()
    rows = models.PositiveIntegerField()  # measurements it learned from
    networks = models.PositiveIntegerField()  # distinct networks among them
    expected_error = models.FloatField()  # 90th percentile |relative error|, leaving each network out
    median_error = models.FloatField()
    # engine.learned.Validation: its errors and the profile's on the same rows, its 90% ratios, and whether
    # it is used ({} in models fitted before the gate: not used until the next refit)
    validation = models.JSONField(default=dict, blank=True)
    fitted = models.BinaryField()  # the pickled regressor: written and read by this application only
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["device", "-version"]
        constraints = [models.UniqueConstraint(fields=["device", "version"], name="one_time_model_version")]

    def __str__(self) -> str:
        return f"time model {self.version} of {self.device_id}"


class OwnedRecord(models.Model):
    """A row a user owns, listed newest first (each model's `owner` foreign key has its own related name)."""

    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        abstract = True
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["owner", "-created_at"])]


class Recommendation(OwnedRecord):
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="recommendations"
    )
    spec = models.JSONField(encoder=FastEncoder)  # the normalised TaskSpec
    result = models.JSONField(encoder=FastEncoder)  # engine.recommend()'s answer, without id
    # engine.ENGINE_VERSION when it was made (services.advise); 0: stored before versions were recorded
    engine_version = models.PositiveIntegerField(default=0)

    def __str__(self) -> str:
        return f"Recommendation {self.pk} ({self.spec.get('task')})"

    @property
    def first_family(self) -> str:
        candidates: list[dict[str, Any]] = self.result.get("candidates", [])
        return str(candidates[0]["family"]) if candidates else ""


class DeviceJob(models.Model):
    """The life of a job that runs on a device's queue (calibrations, accuracy probes): queued, claimed by one
    worker, running with a heartbeat, then finished; an outbox (sent_at) and a cancel request."""

    QUEUED, RUNNING, SUCCEEDED, FAILED, CANCELLED = "queued", "running", "succeeded", "failed", "cancelled"
    STATUS_CHOICES = [(s, s) for s in (QUEUED, RUNNING, SUCCEEDED, FAILED, CANCELLED)]
    FINISHED = (SUCCEEDED, FAILED, CANCELLED)

    time_limit_seconds = models.PositiveIntegerField()
    options = models.JSONField(default=dict, blank=True)
    status = models.CharField(max_length=12, choices=STATUS_CHOICES, default=QUEUED, db_index=True)
    progress = models.FloatField(default=0.0)
    step = models.CharField(max_length=300, blank=True)
    error = models.TextField(blank=True)
    sent_at = models.DateTimeField(null=True, blank=True)  # null: not yet handed to the broker (outbox)
    attempts = models.PositiveIntegerField(default=0)
    cancel_requested = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # engine.remaining.WorkPlan as JSON, set at submit: what the job is expected to do and how long each step
    # takes; its progress marks ([seconds since start, done, total], first and latest) pace what is left
    work_plan = models.JSONField(null=True, blank=True)
    marks = models.JSONField(default=list, blank=True)

    if TYPE_CHECKING:  # every kind declares its own foreign keys to the device it runs on and its owner
        device: Device
        device_id: str
        owner_id: int

    class Meta:
        abstract = True

    @property
    def finished(self) -> bool:
        return self.status in self.FINISHED

    @classmethod
    def claim(cls, pk: int) -> bool:
        """Take a queued job for this worker with one conditional UPDATE: a re-delivered or duplicate message,
        or a job cancelled meanwhile, claims nothing."""
        now = timezone.now()
        return bool(
            cls._default_manager.filter(pk=pk, status=cls.QUEUED, cancel_requested=False).update(
                status=cls.RUNNING,
                started_at=now,
                heartbeat_at=now,
                attempts=F("attempts") + 1,
                step="starting",
                error="",
                marks=[],
            )
        )


class CalibrationJob(DeviceJob):
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="calibrations")
    recommendation = models.ForeignKey(Recommendation, on_delete=models.CASCADE, related_name="calibrations")
    candidate = models.PositiveIntegerField(default=0)
    device = models.ForeignKey(Device, on_delete=models.PROTECT, related_name="jobs")
    batch_sizes = models.JSONField(default=list)
    threads = models.JSONField(default=list)

    summary = models.JSONField(default=dict, blank=True)
    estimate = models.JSONField(null=True, blank=True)  # the measured estimate, once succeeded

    idempotency_key = models.CharField(max_length=200, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["owner", "idempotency_key"],
                condition=~models.Q(idempotency_key=""),
                name="unique_idempotency_key_per_owner",
            )
        ]
        indexes = [models.Index(fields=["owner", "-created_at"]), models.Index(fields=["device", "status"])]

    def __str__(self) -> str:
        return f"Calibration {self.pk} on {self.device_id} ({self.status})"


class MeasuredConfiguration(models.Model):
    """One measured configuration of a calibration; saved as soon as it is measured so a crash loses at most
    one. Its `result` is the contract's Measurement (advisor.contract), which the API serves."""

    job = models.ForeignKey(CalibrationJob, on_delete=models.CASCADE, related_name="measurements")
    batch_size = models.PositiveIntegerField()
    threads = models.PositiveIntegerField(null=True, blank=True)
    allocator = models.CharField(max_length=20, default="default")
    status = models.CharField(max_length=12, default="ok")  # "ok" or "oom"
    seconds_per_batch = models.FloatField(null=True, blank=True)
    result = models.JSONField()  # advisor.calibration.measure()'s contract.Measurement
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return f"batch {self.batch_size}, {self.threads} threads: {self.seconds_per_batch}"


class Notifications(models.Model):
    """How a user hears that a job of theirs finished or failed: a webhook (POST JSON) and/or an email."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="notifications"
    )
    webhook_url = models.URLField(max_length=500, blank=True)  # http(s) only, checked by the form
    email = models.BooleanField(default=False)  # to the account's email address

    def __str__(self) -> str:
        return f"notifications of {self.user_id}"


class Refusal(models.Model):
    """How many submissions were refused, by kind of job and reason (the refused field, or "throttle"): a
    counter in the database, so the metrics are right whichever web process refused."""

    kind = models.CharField(max_length=40)
    reason = models.CharField(max_length=100)
    count = models.PositiveBigIntegerField(default=0)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["kind", "reason"], name="one_refusal_counter")]

    def __str__(self) -> str:
        return f"{self.kind} refused for {self.reason}: {self.count}"
