"""DRF serializers of the probe API: shapes only; samples are checked by the learning side (one source of
truth)."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from advisor.api.schema import request_body
from advisor.api.serializers import Forecasts
from advisor.ids import MAX_ID
from advisor.probe.learning.samples import DEMOS
from advisor.probe.models import DataSample, ProbeJob


class SampleSerializer(serializers.ModelSerializer[DataSample]):
    classes = serializers.SerializerMethodField()
    class_counts = serializers.SerializerMethodField()

    class Meta:
        model = DataSample
        fields = [
            "id",
            "name",
            "format",
            "original_name",
            "label_column",
            "examples",
            "input_shape",
            "label_kind",
            "outputs",
            "classes",
            "class_counts",
            "size_bytes",
            "upload_bytes",
            "created_at",
        ]
        read_only_fields = fields

    def get_classes(self, obj: DataSample) -> list[str]:
        return list(obj.info.get("classes") or [])

    def get_class_counts(self, obj: DataSample) -> list[int]:
        return list(obj.info.get("class_counts") or [])


class SampleUploadSerializer(serializers.Serializer[dict[str, Any]]):
    file = serializers.FileField(
        required=False,
        allow_empty_file=True,  # the sample's own check names an empty file
        help_text="CSV (header row; name the label column), NPZ (arrays x and y), NPY (x only) or a ZIP of "
        "PNG/JPEG images in one folder per class",
    )
    demo = serializers.ChoiceField(choices=sorted(DEMOS), required=False, help_text="a bundled demo data set")
    name = serializers.CharField(max_length=200, allow_blank=True, default="")
    label_column = serializers.CharField(max_length=200, allow_blank=True, default="")
    recommendation = serializers.IntegerField(
        min_value=1,
        max_value=MAX_ID,
        required=False,
        help_text="check the sample against this recommendation's spec",
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if ("file" in attrs) == ("demo" in attrs):
            raise serializers.ValidationError({"file": ["send either a file or a demo data set's name"]})
        return attrs


@request_body
class ProbeRequestSerializer(serializers.Serializer[dict[str, Any]]):
    recommendation = serializers.IntegerField(min_value=1, max_value=MAX_ID)
    sample = serializers.IntegerField(min_value=1, max_value=MAX_ID)
    device = serializers.CharField(max_length=200, help_text="a device id from GET /api/v1/devices/")
    time_limit_seconds = serializers.IntegerField(min_value=1, max_value=86400, required=False)


class ProbeSerializer(Forecasts, serializers.ModelSerializer[ProbeJob]):
    kind = "probe"
    previous: serializers.PrimaryKeyRelatedField[ProbeJob] = serializers.PrimaryKeyRelatedField(
        read_only=True,
        allow_null=True,
        help_text="the probe whose next step this one runs (POST probes/{id}/next/), or null",
    )
    variation = serializers.JSONField(
        read_only=True,
        help_text="the change its candidate carries against the recommendation's, as its next step proposed "
        'it ({"width": 2}: every hidden width x2; {"weight_decay": 0.001}); {}: the candidate as recommended',
    )
    followed_by = serializers.SerializerMethodField(
        help_text="the probes that run this one's next step, oldest first"
    )

    class Meta:
        model = ProbeJob
        fields = [
            "id",
            "recommendation",
            "sample",
            "device",
            "shallow_candidate",
            "deep_candidate",
            "variation",
            "previous",
            "followed_by",
            *Forecasts.RUN,
            "verdict",
            "error",
            "attempts",
            *Forecasts.TIMES,
        ]
        read_only_fields = fields

    def get_followed_by(self, obj: ProbeJob) -> list[int]:
        return sorted(p.pk for p in obj.next_probes.all())
