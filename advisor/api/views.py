"""The REST API: validate, call a service, serialise."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from django.shortcuts import get_object_or_404
from rest_framework import status
from rest_framework.decorators import api_view
from rest_framework.request import Request
from rest_framework.response import Response

from advisor import engine, services
from advisor.api.serializers import CalibrationRequestSerializer, CalibrationSerializer, DeviceSerializer
from advisor.models import CalibrationJob, Device, Recommendation


def _own(queryset: QuerySet[Any], request: Request) -> QuerySet[Any]:
    return queryset if request.user.is_staff else queryset.filter(owner=request.user)


@api_view(["GET", "POST"])
def recommendations(request: Request) -> Response:
    if request.method == "POST":
        if not isinstance(request.data, dict):
            return Response({"spec": ["expected a JSON object (a TaskSpec)"]}, status=400)
        try:
            rec = services.advise(owner=request.user, spec=dict(request.data))
        except engine.SpecError as exc:
            return Response(exc.errors, status=status.HTTP_400_BAD_REQUEST)
        return Response(services.recommendation_payload(rec), status=status.HTTP_201_CREATED)
    recs = _own(Recommendation.objects.all(), request)
    return Response([services.recommendation_payload(r) for r in recs[:50]])


@api_view(["GET"])
def recommendation_detail(request: Request, pk: int) -> Response:
    rec = get_object_or_404(_own(Recommendation.objects.all(), request), pk=pk)
    return Response(services.recommendation_payload(rec))


@api_view(["GET", "POST"])
def calibrations(request: Request) -> Response:
    if request.method == "GET":
        jobs = _own(CalibrationJob.objects.prefetch_related("measurements"), request)[:50]
        return Response(CalibrationSerializer(jobs, many=True).data)
    form = CalibrationRequestSerializer(data=request.data)
    form.is_valid(raise_exception=True)
    data = form.validated_data
    rec = Recommendation.objects.filter(pk=data["recommendation"]).first()
    if rec is None or (rec.owner_id != request.user.pk and not request.user.is_staff):
        return Response({"recommendation": ["no such recommendation"]}, status=400)
    device = Device.objects.filter(pk=data["device"]).first()
    if device is None:
        return Response({"device": [f"no device {data['device']!r}; see GET /api/v1/devices/"]}, status=400)
    try:
        job, _ = services.submit_calibration(
            owner=request.user,
            recommendation=rec,
            candidate=data["candidate"],
            device=device,
            batch_sizes=data["batch_sizes"],
            threads=data["threads"],
            time_limit_seconds=data.get("time_limit_seconds"),
            idempotency_key=request.headers.get("Idempotency-Key", "")[:200],
        )
    except services.CalibrationRefused as exc:
        return Response(exc.errors, status=400)
    job.refresh_from_db()
    return Response(CalibrationSerializer(job).data, status=status.HTTP_202_ACCEPTED)


@api_view(["GET"])
def calibration_detail(request: Request, pk: int) -> Response:
    job = get_object_or_404(_own(CalibrationJob.objects.all(), request), pk=pk)
    return Response(CalibrationSerializer(job).data)


@api_view(["POST"])
def calibration_cancel(request: Request, pk: int) -> Response:
    job = get_object_or_404(_own(CalibrationJob.objects.all(), request), pk=pk)
    try:
        job = services.cancel_calibration(job=job)
    except services.JobFinished as exc:
        return Response({"detail": str(exc)}, status=status.HTTP_409_CONFLICT)
    return Response(CalibrationSerializer(job).data)


@api_view(["GET"])
def devices(request: Request) -> Response:
    return Response(DeviceSerializer(Device.objects.all(), many=True).data)


@api_view(["GET"])
def gpu_catalog(request: Request) -> Response:
    return Response(engine.gpu_catalog())
