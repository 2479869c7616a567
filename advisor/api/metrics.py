"""GET /api/v1/metrics/ (staff): the team box's figures in Prometheus's text format.

Every figure is read from the database when Prometheus scrapes (a custom collector, no in-process counters),
so it is the same whichever of gunicorn's processes answers: job counts by kind and state, each device's
queue length and oldest wait, job durations and waits, worker heartbeats' age, drained devices, and
refusals by reason (counted in the database by the services that refuse). docs/CONTRACT.md names each."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime

from django.db.models import Count, F, Min
from django.http import HttpResponse
from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.registry import Collector
from rest_framework.permissions import IsAdminUser
from rest_framework.request import Request
from rest_framework.views import APIView

from advisor.api.serializers import ErrorSerializer
from advisor.models import Device, DeviceJob, Refusal
from advisor.queueing import KINDS

# seconds: a calibration is seconds to minutes, a wait anything up to hours
BUCKETS = (1.0, 5.0, 15.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1800.0, 3600.0)
STATES = [s for s, _ in DeviceJob.STATUS_CHOICES]


class DatabaseCollector(Collector):
    def __init__(self, now: datetime | None = None) -> None:
        self.now = now or timezone.now()

    def collect(self) -> Iterator[Metric]:
        yield self._jobs()
        yield from self._queues()
        yield self._histogram(
            "advisor_job_duration_seconds",
            "Seconds from start to end of finished jobs",
            "started_at",
            "finished_at",
        )
        yield self._histogram(
            "advisor_job_wait_seconds",
            "Seconds from submission to start of started jobs",
            "created_at",
            "started_at",
        )
        yield from self._devices()
        yield self._refusals()

    def _jobs(self) -> Metric:
        jobs = GaugeMetricFamily("advisor_jobs", "Jobs by kind and state", labels=["kind", "state"])
        for kind, model in KINDS.items():
            counts = dict(model._default_manager.values_list("status").annotate(n=Count("id")).order_by())
            for state in STATES:
                jobs.add_metric([kind, state], float(counts.get(state, 0)))
        return jobs

    def _queues(self) -> Iterator[Metric]:
        length = GaugeMetricFamily(
            "advisor_queue_length", "Queued jobs of every kind per device", labels=["device"]
        )
        oldest = GaugeMetricFamily(
            "advisor_queue_oldest_wait_seconds",
            "How long the oldest queued job of the device has waited",
            labels=["device"],
        )
        counts: dict[str, int] = {}
        first: dict[str, datetime] = {}
        for model in KINDS.values():
            rows = (
                model._default_manager.filter(status=DeviceJob.QUEUED)
                .values("device")
                .annotate(n=Count("id"), at=Min("created_at"))
                .order_by()
            )
            for row in rows:
                counts[row["device"]] = counts.get(row["device"], 0) + row["n"]
                first[row["device"]] = min(first.get(row["device"], row["at"]), row["at"])
        for device in Device.objects.values_list("pk", flat=True):
            length.add_metric([device], float(counts.get(device, 0)))
            oldest.add_metric(
                [device], (self.now - first[device]).total_seconds() if device in first else 0.0
            )
        yield length
        yield oldest

    def _histogram(self, name: str, text: str, start: str, end: str) -> Metric:
        family = HistogramMetricFamily(name, text, labels=["kind"])
        for kind, model in KINDS.items():
            done = model._default_manager.filter(**{f"{start}__isnull": False, f"{end}__isnull": False})
            seconds = [
                (b - a).total_seconds() for a, b in done.annotate(a=F(start), b=F(end)).values_list("a", "b")
            ]
            cumulative = [(str(le), float(sum(1 for s in seconds if s <= le))) for le in BUCKETS]
            family.add_metric([kind], [*cumulative, ("+Inf", float(len(seconds)))], sum_value=sum(seconds))
        return family

    def _devices(self) -> Iterator[Metric]:
        age = GaugeMetricFamily(
            "advisor_worker_heartbeat_age_seconds",
            "Seconds since the device's worker last beat",
            labels=["device"],
        )
        drained = GaugeMetricFamily(
            "advisor_device_draining", "1 while staff drained the device", labels=["device"]
        )
        for device, seen, draining in Device.objects.values_list("pk", "last_seen", "draining"):
            age.add_metric([device], (self.now - seen).total_seconds())
            drained.add_metric([device], 1.0 if draining else 0.0)
        yield age
        yield drained

    def _refusals(self) -> Metric:
        refused = CounterMetricFamily(
            "advisor_refusals",
            "Refused submissions by kind and reason (the refused field, or throttle)",
            labels=["kind", "reason"],
        )
        for kind, reason, count in Refusal.objects.values_list("kind", "reason", "count"):
            refused.add_metric([kind, reason], float(count))
        return refused


def exposition() -> bytes:
    registry = CollectorRegistry(auto_describe=False)
    registry.register(DatabaseCollector())
    return generate_latest(registry)


class Metrics(APIView):
    permission_classes = [
        IsAdminUser
    ]  # the whole fleet's figures: staff (a staff user's token for Prometheus)

    @extend_schema(
        responses={
            200: OpenApiResponse(OpenApiTypes.STR, description="Prometheus's text format"),
            403: OpenApiResponse(ErrorSerializer, description="not staff"),
        },
        summary="Prometheus metrics of jobs, queues and workers (staff)",
    )
    def get(self, request: Request) -> HttpResponse:
        return HttpResponse(exposition(), content_type=CONTENT_TYPE_LATEST)
