"""The probe's REST endpoints under /api/v1/: samples/ (upload, list, show, delete) and probes/ (start, list,
show, cancel). Token or session auth; each user sees only their own rows (others' are 404)."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema, extend_schema_view
from rest_framework import mixins, status, viewsets
from rest_framework.decorators import action
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response

from advisor import queries as core_queries
from advisor.accounts import signed_in
from advisor.api.policies import JSONParser, query_id
from advisor.api.schema import FieldErrors
from advisor.api.views import URL, cancelled, created
from advisor.probe import queries, services
from advisor.probe.learning.samples import SampleError
from advisor.probe.models import DataSample, ProbeJob
from advisor.probe.serializers import (
    ProbeRequestSerializer,
    ProbeSerializer,
    SampleSerializer,
    SampleUploadSerializer,
)

FIELD_ERRORS = OpenApiResponse(FieldErrors, description="{field: [messages]}")
DETAIL = OpenApiResponse(OpenApiTypes.OBJECT, description='{"detail": "..."}')


class SampleViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet[Any]):
    serializer_class = SampleSerializer
    parser_classes = [MultiPartParser, FormParser, JSONParser]

    def get_queryset(self) -> QuerySet[DataSample]:
        return queries.visible_samples(self.request.user)

    @extend_schema(
        request={"multipart/form-data": SampleUploadSerializer, "application/json": SampleUploadSerializer},
        responses={201: SampleSerializer, 400: FIELD_ERRORS, 507: FIELD_ERRORS},
        summary="Upload a data sample (or keep a copy of a bundled demo data set)",
    )
    def create(self, request: Request) -> Response:
        form = SampleUploadSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        asked = form.validated_data
        rec = None
        if asked.get("recommendation"):
            rec = core_queries.recommendation_for(request.user, asked["recommendation"])
            if rec is None:
                return Response({"recommendation": ["no such recommendation of yours"]}, status=400)
        try:
            sample = services.create_sample(
                owner=signed_in(request.user),
                upload=asked.get("file"),
                demo=asked.get("demo", ""),
                name=asked["name"],
                label_column=asked["label_column"],
                recommendation=rec,
            )
        except SampleError as exc:
            return Response(exc.errors, status=exc.status)  # 400, or 507 when the disk is full
        return created(SampleSerializer(sample).data, f"{URL}samples/{sample.pk}/")

    @extend_schema(responses={204: None, 404: DETAIL, 409: DETAIL}, summary="Delete a sample and its file")
    def destroy(self, request: Request, pk: int) -> Response:
        sample = self.get_object()
        try:
            services.delete_sample(sample=sample)
        except services.Conflict as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_409_CONFLICT)
        return Response(status=status.HTTP_204_NO_CONTENT)


# The actions' schemas, one table (list and retrieve come from DRF's mixins).
@extend_schema_view(
    list=extend_schema(
        parameters=[
            OpenApiParameter("recommendation", int, description="only probes of this recommendation")
        ],
        responses={200: ProbeSerializer(many=True), 400: FIELD_ERRORS},
    ),
    create=extend_schema(
        request=ProbeRequestSerializer,
        responses={202: ProbeSerializer, 400: FIELD_ERRORS},
        summary="Probe a recommendation's shallow (then deep) candidate on a data sample, on a device",
    ),
    cancel=extend_schema(
        request=None, responses={200: ProbeSerializer, 404: DETAIL, 409: DETAIL}, summary="Cancel a probe"
    ),
    next_step=extend_schema(
        request=None,
        responses={202: ProbeSerializer, 200: ProbeSerializer, 400: FIELD_ERRORS, 404: DETAIL},
        summary="Run the next step a probe's verdict proposes (verdict.next) as a new probe",
        description="202 with the new probe (its `previous` is this one); 200 with the one already started "
        "by an earlier call; 400 `{field: [messages]}` when the probe has not finished, proposes no "
        "candidate, lost its sample, or the new probe is refused as POST probes/ refuses one.",
    ),
)
class ProbeViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet[Any]):
    serializer_class = ProbeSerializer

    def get_queryset(self) -> QuerySet[ProbeJob]:
        if self.action != "list":
            return queries.listed_probes(self.request.user)
        rec = query_id(self.request, "recommendation", "a recommendation's id")
        return queries.listed_probes(self.request.user, recommendation=rec)

    def create(self, request: Request) -> Response:
        form = ProbeRequestSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        asked = form.validated_data
        errors: dict[str, list[str]] = {}
        rec = core_queries.recommendation_for(request.user, asked["recommendation"])
        sample = queries.sample_for(request.user, asked["sample"])
        device = core_queries.device(asked["device"])
        if rec is None:
            errors["recommendation"] = ["no such recommendation of yours"]
        if sample is None:
            errors["sample"] = ["no such sample of yours; upload one to /api/v1/samples/"]
        if device is None:
            errors["device"] = [f"no device {asked['device']!r}; see GET /api/v1/devices/"]
        if rec is None or sample is None or device is None:
            return Response(errors, status=status.HTTP_400_BAD_REQUEST)
        try:
            job = services.submit_probe(
                owner=signed_in(request.user),
                recommendation=rec,
                sample=sample,
                device=device,
                time_limit_seconds=asked.get("time_limit_seconds"),
            )
        except services.ProbeRefused as exc:
            return Response(exc.errors, status=status.HTTP_400_BAD_REQUEST)
        job.refresh_from_db()
        return created(ProbeSerializer(job).data, f"{URL}probes/{job.pk}/", status.HTTP_202_ACCEPTED)

    @action(detail=True, methods=["post"])
    def cancel(self, request: Request, pk: int) -> Response:
        return cancelled(self.get_object(), services.cancel_probe, ProbeSerializer)

    @action(detail=True, methods=["post"], url_path="next")
    def next_step(self, request: Request, pk: int) -> Response:
        try:
            job, new = services.submit_next(owner=signed_in(request.user), job=self.get_object())
        except services.ProbeRefused as exc:
            return Response(exc.errors, status=status.HTTP_400_BAD_REQUEST)
        job.refresh_from_db()
        answer = status.HTTP_202_ACCEPTED if new else status.HTTP_200_OK
        return created(ProbeSerializer(job).data, f"{URL}probes/{job.pk}/", answer)
