"""DRF serializers: shapes only. A TaskSpec is validated by the engine (one source of truth)."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from advisor import services
from advisor.models import CalibrationJob, Device, Measurement


class DeviceSerializer(serializers.ModelSerializer[Device]):
    online = serializers.BooleanField(read_only=True)

    class Meta:
        model = Device
        fields = [
            "id",
            "host",
            "kind",
            "index",
            "name",
            "cores",
            "threads",
            "memory_bytes",
            "queue",
            "online",
            "last_seen",
        ]


class CalibrationRequestSerializer(serializers.Serializer[dict[str, Any]]):
    recommendation = serializers.IntegerField(min_value=1)
    candidate = serializers.IntegerField(min_value=0, default=0)
    device = serializers.CharField(max_length=200)
    batch_sizes = serializers.ListField(
        child=serializers.IntegerField(min_value=1), default=list, max_length=16
    )
    threads = serializers.ListField(child=serializers.IntegerField(min_value=1), default=list, max_length=64)
    time_limit_seconds = serializers.IntegerField(min_value=1, required=False)


class MeasurementSerializer(serializers.ModelSerializer[Measurement]):
    def to_representation(self, instance: Measurement) -> dict[str, Any]:
        return {**instance.result, "batch_size": instance.batch_size, "allocator": instance.allocator}

    class Meta:
        model = Measurement
        fields: list[str] = []


class CalibrationSerializer(serializers.ModelSerializer[CalibrationJob]):
    device = serializers.CharField(source="device_id")
    results = MeasurementSerializer(source="measurements", many=True, read_only=True)

    class Meta:
        model = CalibrationJob
        fields = [
            "id",
            "recommendation",
            "candidate",
            "device",
            "batch_sizes",
            "threads",
            "time_limit_seconds",
            "status",
            "progress",
            "step",
            "results",
            "estimate",
            "summary",
            "error",
            "attempts",
            "created_at",
            "started_at",
            "finished_at",
        ]
        read_only_fields = fields


def recommendation_representation(rec: Any) -> dict[str, Any]:
    return services.recommendation_payload(rec)
