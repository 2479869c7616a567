"""DRF serializers of calibration jobs, devices and errors (TaskSpec, Recommendation: api/spec.py)."""

from __future__ import annotations

from typing import Any
from weakref import WeakKeyDictionary

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from advisor import contract, queries
from advisor.api.schema import request_body
from advisor.api.spec import EstimateSerializer
from advisor.ids import MAX_ID
from advisor.models import CalibrationJob, Device, MeasuredConfiguration, Recommendation
from advisor.queueing import Forecaster, Left, Place
from advisor.services import MAX_BATCH_SIZE
from advisor.spread import Participants, participants

# The database column is a 32-bit positive integer; larger values are refused here, the real cap
# (CALIBRATION_MAX_SECONDS) by the service, which names it.
_MAX_SECONDS_FIELD = 2**31 - 1


class RestartSerializer(serializers.Serializer[dict[str, Any]]):
    count = serializers.IntegerField(help_text="restarts since `manage.py serve` started")
    reason = serializers.CharField(help_text="how the previous worker ended, e.g. killed by SIGKILL")
    at = serializers.DateTimeField()


class SpreadSerializer(serializers.Serializer[Participants]):
    group = serializers.CharField()
    rank = serializers.IntegerField()
    world = serializers.IntegerField()
    devices = serializers.ListField(child=serializers.CharField(), help_text="device ids in rank order")
    jobs = serializers.ListField(child=serializers.IntegerField(), help_text="job ids in rank order")


class PlaceSerializer(serializers.Serializer[Place]):
    position = serializers.IntegerField(help_text="1: the next job its device starts (fair-share order)")
    ahead = serializers.IntegerField(help_text="jobs before it: the running one and those queued before it")
    expected_start = serializers.DateTimeField(allow_null=True, help_text="null while the device is drained")
    starts_in_seconds = serializers.FloatField(allow_null=True)
    interval = serializers.ListField(
        child=serializers.FloatField(),
        min_length=2,
        max_length=2,
        allow_null=True,
        help_text="(added) [low, high] seconds: the 90% range of the wait; null while the device is drained",
    )
    draining = serializers.BooleanField(help_text="staff drained the device: nothing starts until undrained")


class RemainingSerializer(serializers.Serializer[Left]):
    remaining_seconds = serializers.FloatField()
    expected_finish = serializers.DateTimeField()
    basis = serializers.ChoiceField(
        choices=["plan", "progress", "limit"],
        help_text="plan: no step finished yet; progress: paced by the finished steps; limit: its time limit",
    )
    interval = serializers.ListField(
        child=serializers.FloatField(),
        min_length=2,
        max_length=2,
        help_text="(added) [low, high] seconds: the 90% range of the time that will actually remain",
    )


_FORECASTERS: WeakKeyDictionary[Any, Forecaster] = WeakKeyDictionary()


class Forecasts(serializers.Serializer[Any]):
    """`queue` and `remaining` of a device job, from its device's queue computed once per response."""

    # (The docstring is every job's schema description.) What every kind of device job shows alike: its
    # device, `queue`, `remaining`, and its run and times, in the order every kind lists them among its own.
    kind = ""  # the job kind's noun (queueing.KINDS)
    RUN = ["time_limit_seconds", "status", "progress", "step", "queue", "remaining", "results"]
    TIMES = ["created_at", "started_at", "finished_at"]

    device = serializers.CharField(source="device_id")
    queue = serializers.SerializerMethodField()
    remaining = serializers.SerializerMethodField()

    def _forecaster(self) -> Forecaster:
        root = self.parent if self.parent is not None else self  # a list's items share their list's
        if root not in _FORECASTERS:
            _FORECASTERS[root] = Forecaster()
        return _FORECASTERS[root]

    @extend_schema_field(PlaceSerializer(allow_null=True))
    def get_queue(self, job: Any) -> Place | None:
        """A queued job's place in its device's fair-share queue and its expected start; null otherwise."""
        return self._forecaster().place(self.kind, job)

    @extend_schema_field(RemainingSerializer(allow_null=True))
    def get_remaining(self, job: Any) -> Left | None:
        """A running job's remaining time and expected finish; null otherwise."""
        return self._forecaster().finish(self.kind, job)


class DeviceSerializer(serializers.ModelSerializer[Device]):
    online = serializers.BooleanField(read_only=True)
    restart = serializers.SerializerMethodField()

    @extend_schema_field(RestartSerializer(allow_null=True))
    def get_restart(self, device: Device) -> dict[str, Any] | None:
        """Set when the device's worker was restarted by a supervisor (`manage.py serve`), else null."""
        restart = device.details.get("restart") if isinstance(device.details, dict) else None
        return restart if isinstance(restart, dict) else None

    host_gpus = serializers.SerializerMethodField()

    @extend_schema_field(serializers.IntegerField(allow_null=True))
    def get_host_gpus(self, device: Device) -> int | None:
        """A GPU device's: the GPUs its worker sees, the largest data_parallel world size; null on a CPU."""
        return queries.host_gpus(device) if device.kind == "cuda" else None

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
            "restart",
            "host_gpus",
        ]


@request_body
class CalibrationRequestSerializer(serializers.Serializer[dict[str, Any]]):
    """POST calibrations/. The shape is checked here; what a device and a candidate allow is checked by
    services.check_calibration_limits, which names the limit it applies."""

    recommendation = serializers.IntegerField(
        min_value=1, max_value=MAX_ID, help_text="a recommendation's id"
    )
    candidate = serializers.IntegerField(
        min_value=0, max_value=1000, default=0, help_text="index into the recommendation's candidates"
    )
    device = serializers.CharField(
        max_length=200, required=False, help_text="a device id from GET devices/ (required without devices)"
    )
    devices = serializers.ListField(
        child=serializers.CharField(max_length=200),
        required=False,
        min_length=2,
        max_length=64,
        help_text="instead of device: two or more CPU device ids, each on a host of its own, to spread one "
        "data-parallel calibration over (a rank per device, rendezvous through torch.distributed)",
    )
    batch_sizes = serializers.ListField(
        child=serializers.IntegerField(min_value=1, max_value=MAX_BATCH_SIZE),
        default=list,
        max_length=16,
        help_text="mini-batch sizes to measure; empty: the candidate's own",
    )
    threads = serializers.ListField(
        child=serializers.IntegerField(min_value=1, max_value=4096),
        default=list,
        max_length=64,
        help_text="CPU thread counts to measure; empty: the device's physical cores",
    )
    data_parallel = serializers.ListField(
        child=serializers.IntegerField(min_value=1, max_value=1024),
        default=list,
        max_length=8,
        help_text="world sizes of a data-parallel measurement after the sweep (DistributedDataParallel "
        "ranks sharing a CPU device's cores with gloo, or on a GPU device one GPU each of those its worker "
        "sees with NCCL), e.g. [1, 2]; empty: none",
    )
    time_limit_seconds = serializers.IntegerField(
        min_value=1,
        max_value=_MAX_SECONDS_FIELD,
        required=False,
        help_text="wall-clock limit of the whole job (the server caps it: CALIBRATION_MAX_SECONDS)",
    )

    def validate_recommendation(self, value: int) -> Recommendation:
        rec = queries.recommendation_for(self.context["request"].user, value)
        if rec is None:
            raise serializers.ValidationError(f"no recommendation {value} of yours")
        return rec

    def validate_device(self, value: str) -> Device:
        return _device(value)

    def validate_devices(self, value: list[str]) -> list[Device]:
        return [_device(v) for v in value]

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        """One device, or a spread over several: `devices` goes with none of the one-device fields."""
        if "devices" not in attrs:
            if "device" not in attrs:
                raise serializers.ValidationError({"device": ["required (or devices, to spread the job)"]})
            return attrs
        alone = [f for f in ("device", "batch_sizes", "threads", "data_parallel") if attrs.get(f)]
        if alone:
            raise serializers.ValidationError(
                {
                    f: ["does not go with devices (a spread calibration times the candidate's own batch)"]
                    for f in alone
                }
            )
        return attrs


def _device(value: str) -> Device:
    device = queries.device(value)
    if device is None:
        raise serializers.ValidationError(f"no device {value!r}; GET /api/v1/devices/ lists them")
    return device


class UnreliabilitySerializer(serializers.Serializer[contract.Unreliability]):
    code = serializers.ChoiceField(list(contract.UNRELIABILITY_CODES))
    text = serializers.CharField()


def _optional_float(help_text: str = "") -> serializers.FloatField:
    return serializers.FloatField(required=False, allow_null=True, help_text=help_text)


class MeasurementSerializer(serializers.Serializer[MeasuredConfiguration]):
    """One measured configuration: what advisor.calibration.measure() returned (docs/CONTRACT.md, Python
    entry points), as its row keeps it."""

    status = serializers.ChoiceField(["ok", "oom"])
    message = serializers.CharField(allow_blank=True)
    seconds_per_batch = serializers.FloatField(allow_null=True, help_text="the median step")
    mean_seconds_per_batch = serializers.FloatField(
        allow_null=True, help_text="the mean step, stalls included"
    )
    gather_seconds_per_batch = serializers.FloatField(required=False)
    iqr = serializers.FloatField(allow_null=True)
    iterations = serializers.IntegerField()
    examples_per_second = serializers.FloatField(allow_null=True)
    peak_memory_bytes = serializers.IntegerField(allow_null=True)
    achieved_flops = serializers.FloatField(allow_null=True)
    device = serializers.CharField()
    threads = serializers.IntegerField(allow_null=True)
    batch_size = serializers.IntegerField()
    allocator = serializers.CharField()
    warmup = serializers.IntegerField(required=False)
    noisy = serializers.BooleanField(required=False, help_text="descriptive: IQR above 10% of the median")
    unreliable = serializers.BooleanField(required=False)
    unreliable_reasons = UnreliabilitySerializer(many=True, required=False)
    trimmed_mean_seconds_per_batch = serializers.FloatField(required=False)
    median_interval = serializers.ListField(
        child=serializers.FloatField(), required=False, allow_null=True, min_length=2, max_length=2
    )
    interval_halfwidth = _optional_float()
    stopped = serializers.ChoiceField(["precise", "time", "minimum"], required=False)
    contention = serializers.DictField(
        required=False, allow_null=True, help_text="what was seen of other work meanwhile (docs/CONTRACT.md)"
    )
    family = serializers.CharField(required=False)
    flops_per_example = serializers.IntegerField(required=False)
    step_flops_per_example = serializers.IntegerField(required=False)
    step_flops_formula = serializers.CharField(required=False)
    error = serializers.CharField(required=False, help_text="out of memory: the exception's first line")
    live_tensor_peak_bytes = serializers.IntegerField(required=False, allow_null=True)
    rss_growth_bytes = serializers.IntegerField(required=False, allow_null=True)
    max_memory_reserved_bytes = serializers.IntegerField(required=False, allow_null=True)
    samples = serializers.ListField(child=serializers.FloatField(), required=False)
    user_seconds_per_step = serializers.FloatField(required=False)
    system_seconds_per_step = serializers.FloatField(required=False)
    minor_faults_per_step = serializers.FloatField(required=False)
    major_faults_per_step = serializers.FloatField(required=False)

    def to_representation(self, instance: MeasuredConfiguration) -> dict[str, Any]:
        return {
            **instance.result,
            "batch_size": instance.batch_size,
            "allocator": instance.allocator,
            "status": instance.status,
        }


class CalibrationSerializer(Forecasts, serializers.ModelSerializer[CalibrationJob]):
    kind = "calibration"
    results = MeasurementSerializer(source="measurements", many=True, read_only=True)
    sent = serializers.SerializerMethodField(help_text="false while the job waits for the broker (outbox)")
    data_parallel = serializers.SerializerMethodField(help_text="the world sizes asked for; rows in summary")
    estimate = serializers.SerializerMethodField()
    spread = serializers.SerializerMethodField(
        help_text="for one rank of a calibration spread over several devices: group, rank, world, devices "
        "and jobs (every participant's job id, in rank order); null for a job of one device"
    )

    def get_sent(self, job: CalibrationJob) -> bool:
        return job.sent_at is not None

    def get_data_parallel(self, job: CalibrationJob) -> list[int]:
        return [int(w) for w in job.options.get("data_parallel", [])]

    @extend_schema_field(EstimateSerializer(allow_null=True))
    def get_estimate(self, job: CalibrationJob) -> contract.Estimate | None:
        """The measured estimate (basis measured) at the configuration the sweep found best; null until the
        job succeeds, and where every configuration was unreliable (`summary.withheld` says why)."""
        return job.estimate  # stored as made (running.py): the contract's Estimate

    @extend_schema_field(SpreadSerializer(allow_null=True))
    def get_spread(self, job: CalibrationJob) -> Participants | None:
        return participants(job)

    class Meta:
        model = CalibrationJob
        fields = [
            "id",
            "recommendation",
            "candidate",
            "device",
            "batch_sizes",
            "threads",
            "data_parallel",
            "spread",
            *Forecasts.RUN,
            "estimate",
            "summary",
            "error",
            "attempts",
            "cancel_requested",
            "sent",
            *Forecasts.TIMES,
        ]
        read_only_fields = fields


class ErrorSerializer(serializers.Serializer[dict[str, Any]]):
    detail = serializers.CharField()


class BrokerDownSerializer(serializers.Serializer[dict[str, Any]]):
    detail = serializers.CharField()
    job = CalibrationSerializer()


class GpuSerializer(serializers.Serializer[dict[str, Any]]):
    """One entry of the engine's hardware catalog (more fields may follow)."""

    id = serializers.CharField()
    name = serializers.CharField()
    memory_gb = serializers.FloatField(help_text="the device's memory, GB")
    fp32_tflops = serializers.FloatField(help_text="peak FP32, TFLOPS")
    fp16_tflops = serializers.FloatField(help_text="peak FP16, TFLOPS (on tensor cores if any)")
    memory_bandwidth_gbps = serializers.FloatField(help_text="peak memory bandwidth, GB/s")

    def get_fields(self) -> dict[str, serializers.Field[Any, Any, Any, Any]]:
        # `source`, the catalog's citation: a class attribute of that name would redefine Field.source
        return {**super().get_fields(), "source": serializers.CharField()}
