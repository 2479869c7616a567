"""The REST API: validate with a serializer, call a service, serialise the answer."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from django.db.models import QuerySet
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import mixins, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.throttling import BaseThrottle
from rest_framework.views import APIView

from advisor import engine, queries, services, spread
from advisor.accounts import signed_in
from advisor.api.policies import CalibrationThrottle, query_id
from advisor.api.schema import FieldErrors
from advisor.api.serializers import (
    BrokerDownSerializer,
    CalibrationRequestSerializer,
    CalibrationSerializer,
    DeviceSerializer,
    ErrorSerializer,
    GpuSerializer,
)
from advisor.api.spec import RecommendationRequestSerializer, RecommendationSerializer
from advisor.devices import UnknownDevice, resolve
from advisor.jobs import Conflict
from advisor.models import CalibrationJob, DeviceJob, Recommendation

URL = "/api/v1/"  # where the contract's endpoints live (Location headers)
FIELD_ERRORS = OpenApiResponse(FieldErrors, description="{dotted.path: [messages]}")
NOT_FOUND = OpenApiResponse(ErrorSerializer, description="no such object of yours")
IDEMPOTENCY_KEY_MAX = 200
Job = TypeVar("Job", bound=DeviceJob)


def created(body: Any, url: str, code: int = status.HTTP_201_CREATED) -> Response:
    """A POST's answer: the new row (or queued job: 202) as JSON, its URL in Location."""
    return Response(body, status=code, headers={"Location": url})


def cancelled(job: Job, cancel: Callable[..., Job], serializer: Callable[[Job], Any]) -> Response:
    """POST .../cancel/ of any kind of job: the job after `cancel(job=job)` (queued: cancelled; running: asked
    to stop), or 409 with its status when it had already finished."""
    try:
        job = cancel(job=job)
    except Conflict as exc:
        return Response({"detail": str(exc), "status": job.status}, status=status.HTTP_409_CONFLICT)
    return Response(serializer(job).data)


class RecommendationViewSet(mixins.RetrieveModelMixin, mixins.ListModelMixin, viewsets.GenericViewSet[Any]):
    serializer_class = RecommendationSerializer

    def get_queryset(self) -> QuerySet[Recommendation]:
        return queries.visible_recommendations(self.request.user)

    def get_serializer(self, *args: Any, **kwargs: Any) -> Any:
        if not args and not kwargs:
            # OPTIONS (DRF's metadata) asks for an empty serializer to describe what POST accepts: a TaskSpec.
            return RecommendationRequestSerializer()
        return _Payload(*args, **kwargs)

    @extend_schema(
        request=RecommendationRequestSerializer,
        responses={201: RecommendationSerializer, 400: FIELD_ERRORS},
        summary="Recommend a network for a TaskSpec",
    )
    def create(self, request: Request) -> Response:
        spec = RecommendationRequestSerializer(data=request.data)
        spec.is_valid(raise_exception=True)
        device = None
        asked = request.data.get("device") if isinstance(request.data, dict) else None
        if asked is not None:
            if not isinstance(asked, str) or not asked:
                raise ValidationError({"device": ["must be a device's id (GET devices/)"]})
            try:
                device = resolve(asked, shorthand=False)
            except UnknownDevice as exc:
                return Response(exc.errors, status=status.HTTP_400_BAD_REQUEST)
        try:
            rec = services.advise(owner=signed_in(request.user), spec=spec.validated_data, device=device)
        except engine.SpecError as exc:  # rules that look at the whole spec, beyond one field's check
            return Response(exc.errors, status=status.HTTP_400_BAD_REQUEST)
        return created(
            queries.recommendation_payload(rec, measured_too=False), f"{URL}recommendations/{rec.pk}/"
        )

    @extend_schema(responses={200: RecommendationSerializer(many=True)}, summary="Your recommendations")
    def list(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().list(request, *args, **kwargs)

    @extend_schema(responses={200: RecommendationSerializer, 404: NOT_FOUND})
    def retrieve(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().retrieve(request, *args, **kwargs)


class _Payload:
    """Stands in for a serializer: the stored Recommendation already is the contract's JSON."""

    def __init__(self, instance: Any = None, many: bool = False, **_: Any) -> None:
        self.instance, self.many = instance, many

    @property
    def data(self) -> Any:
        if self.many:
            return [queries.recommendation_payload(rec) for rec in self.instance]
        return queries.recommendation_payload(self.instance)


class CalibrationViewSet(mixins.RetrieveModelMixin, mixins.ListModelMixin, viewsets.GenericViewSet[Any]):
    serializer_class = CalibrationSerializer

    def get_throttles(self) -> list[BaseThrottle]:
        return [CalibrationThrottle()] if self.action == "create" else []

    def get_queryset(self) -> QuerySet[CalibrationJob]:
        user = self.request.user
        if self.action != "list":
            return queries.listed_calibrations(user)
        rec = query_id(self.request, "recommendation", "a recommendation's id")
        return queries.listed_calibrations(user, statuses=self._statuses(), recommendation=rec)

    def _statuses(self) -> list[str] | None:
        asked = self.request.query_params.get("status")
        if not asked:
            return None
        wanted = [s.strip() for s in asked.split(",") if s.strip()]
        known = [s for s, _ in CalibrationJob.STATUS_CHOICES]
        if not wanted or any(s not in known for s in wanted):
            raise ValidationError({"status": [f"each must be one of {', '.join(known)}"]})
        return wanted

    @extend_schema(
        parameters=[
            OpenApiParameter(
                "status",
                str,
                description="only jobs in these states, comma-separated: "
                "queued, running, succeeded, failed, cancelled",
            ),
            OpenApiParameter("recommendation", int, description="only jobs of this recommendation"),
        ],
        responses={200: CalibrationSerializer(many=True), 400: FIELD_ERRORS},
    )
    def list(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().list(request, *args, **kwargs)

    @extend_schema(
        request=CalibrationRequestSerializer,
        parameters=[
            OpenApiParameter(
                "Idempotency-Key",
                str,
                OpenApiParameter.HEADER,
                description="a retry with the same key returns the same job instead of queuing another",
            )
        ],
        responses={
            202: CalibrationSerializer,
            400: FIELD_ERRORS,
            409: ErrorSerializer,
            429: ErrorSerializer,
            503: OpenApiResponse(BrokerDownSerializer, description="broker unreachable; the job is kept"),
        },
        summary="Measure a candidate on a device (queued on that device's worker)",
    )
    def create(self, request: Request) -> Response:
        key = request.headers.get("Idempotency-Key", "")
        if len(key) > IDEMPOTENCY_KEY_MAX or not key.isprintable():
            raise ValidationError(
                {"Idempotency-Key": [f"at most {IDEMPOTENCY_KEY_MAX} printable characters"]}
            )
        form = CalibrationRequestSerializer(data=request.data, context={"request": request})
        form.is_valid(raise_exception=True)
        asked = form.validated_data
        if "devices" in asked:
            return self._spread(request, asked, key)
        try:
            job, created = services.submit_calibration(
                owner=signed_in(request.user),
                recommendation=asked["recommendation"],
                candidate=asked["candidate"],
                device=asked["device"],
                batch_sizes=asked["batch_sizes"],
                threads=asked["threads"],
                time_limit_seconds=asked.get("time_limit_seconds"),
                idempotency_key=key,
                data_parallel=asked["data_parallel"],
            )
        except services.CalibrationRefused as exc:
            return Response(exc.errors, status=status.HTTP_400_BAD_REQUEST)
        if not created:
            conflict = services.idempotency_conflict(
                job,
                **{k: asked[k] for k in ("recommendation", "candidate", "device", "batch_sizes", "threads")},
            )
            if conflict:
                return Response({"detail": conflict}, status=status.HTTP_409_CONFLICT)
        sent = services.delivered(job, created=created)
        body = CalibrationSerializer(job).data
        headers = {"Location": f"{URL}calibrations/{job.pk}/"}
        if not created:
            headers["Idempotent-Replayed"] = "true"
        if not sent:
            detail = (
                f"the message broker is unreachable: calibration {job.pk} is saved and stays queued; it is "
                "sent as soon as the broker is back (a worker's heartbeat resends it). Poll its URL or retry "
                "with the same Idempotency-Key."
            )
            headers["Retry-After"] = "5"
            return Response({"detail": detail, "job": body}, status=503, headers=headers)
        return Response(body, status=status.HTTP_202_ACCEPTED, headers=headers)

    def _spread(self, request: Request, asked: dict[str, Any], key: str) -> Response:
        """POST with devices: one job per device; the answer is rank 0's, whose `spread.jobs` lists all."""
        if key:
            raise ValidationError({"Idempotency-Key": ["not supported with devices (a spread calibration)"]})
        try:
            made = spread.submit_spread_calibration(
                owner=signed_in(request.user),
                recommendation=asked["recommendation"],
                candidate=asked["candidate"],
                devices=asked["devices"],
                time_limit_seconds=asked.get("time_limit_seconds"),
            )
        except services.CalibrationRefused as exc:
            return Response(exc.errors, status=status.HTTP_400_BAD_REQUEST)
        first = made[0]
        if not all(services.delivered(job, created=True) for job in made):
            detail = (
                f"the message broker is unreachable: calibration {first.pk} and its peers are saved and stay "
                "queued; they are sent as soon as the broker is back. Poll their URLs."
            )
            body = {"detail": detail, "job": CalibrationSerializer(first).data}
            return Response(body, status=503, headers={"Retry-After": "5"})
        return created(
            CalibrationSerializer(first).data, f"{URL}calibrations/{first.pk}/", status.HTTP_202_ACCEPTED
        )

    @extend_schema(responses={200: CalibrationSerializer, 404: NOT_FOUND})
    def retrieve(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().retrieve(request, *args, **kwargs)

    @extend_schema(
        request=None,
        responses={200: CalibrationSerializer, 404: NOT_FOUND, 409: ErrorSerializer},
        summary="Cancel a queued or running job",
    )
    @action(detail=True, methods=["post"])
    def cancel(self, request: Request, pk: int) -> Response:
        return cancelled(self.get_object(), services.cancel_calibration, CalibrationSerializer)


class DeviceList(APIView):
    @extend_schema(
        parameters=[
            OpenApiParameter("include_offline", bool, description="also devices whose worker is gone")
        ],
        responses={200: DeviceSerializer(many=True), 400: FIELD_ERRORS},
        summary="The devices live workers offer",
    )
    def get(self, request: Request) -> Response:
        flag = request.query_params.get("include_offline", "false").lower()
        if flag not in {"true", "false", "1", "0"}:
            raise ValidationError({"include_offline": ["must be true or false"]})
        devices = queries.all_devices() if flag in {"true", "1"} else queries.online_devices()
        return Response(DeviceSerializer(devices, many=True).data)


class GpuCatalog(APIView):
    @extend_schema(
        responses={200: GpuSerializer(many=True)}, summary="The GPU catalog (ids for hardware.gpu)"
    )
    def get(self, request: Request) -> Response:
        return Response(engine.gpu_catalog())
