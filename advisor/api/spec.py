"""The TaskSpec and Recommendation as serializers.

Their fields document the contract in the OpenAPI schema; validation is the engine's alone: the TaskSpec
serializer hands the whole body to `advisor.engine.normalise`, whose SpecError.errors are the 400 answer."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers
from rest_framework.fields import empty

from advisor import engine
from advisor.engine import families
from advisor.engine.fields import FIELDS, SpecField


def _serializer_field(field: SpecField) -> serializers.Field[Any, Any, Any, Any]:
    """The DRF field of one declared TaskSpec field (advisor/engine/fields.py): shapes for the schema; the
    engine validates."""
    options: dict[str, Any] = {"required": field.required}
    if field.nullable:
        options["allow_null"] = True
    if field.help:
        options["help_text"] = field.help
    low, high = field.minimum, field.maximum
    if field.kind == "choice":
        return serializers.ChoiceField(list(field.vocabulary()), **options)
    if field.kind == "number":
        return serializers.FloatField(min_value=low, max_value=high, **options)
    whole = serializers.IntegerField(
        min_value=None if low is None else int(low), max_value=None if high is None else int(high)
    )
    if field.kind == "int":
        return serializers.IntegerField(min_value=whole.min_value, max_value=whole.max_value, **options)
    return serializers.ListField(child=whole, min_length=1, **options)


def _declared(path: str) -> serializers.Field[Any, Any, Any, Any]:
    return _serializer_field(next(f for f in FIELDS if f.path == path))


def _section(name: str) -> type[serializers.Serializer[dict[str, Any]]]:
    fields = {f.name: _serializer_field(f) for f in FIELDS if f.section == name}
    return type(f"_{name.title()}", (serializers.Serializer,), fields)


_Data, _Hardware, _Target = _section("data"), _section("hardware"), _section("target")


class TaskSpecSerializer(serializers.Serializer[dict[str, Any]]):
    """What the user describes. The engine validates it; `validated_data` is the normalised spec."""

    task = _declared("task")
    generation = _declared("generation")
    goal = _declared("goal")
    data = _Data()  # type: ignore[assignment]  # the TaskSpec's section, not Serializer.data
    hardware = _Hardware()
    target = _Target(required=False, allow_null=True)

    def run_validation(self, data: Any = empty) -> dict[str, Any]:
        try:
            return engine.normalise(None if data is empty else data)
        except engine.SpecError as exc:
            raise serializers.ValidationError(exc.errors) from None


class RecommendationRequestSerializer(TaskSpecSerializer):
    """POST recommendations/: a TaskSpec, and optionally the device whose profile times it."""

    device = serializers.CharField(
        required=False,
        max_length=200,
        help_text="a device's id (GET devices/): estimates come from its profile (basis profiled) when it "
        "has one, else from the catalog",
    )

    def run_validation(self, data: Any = empty) -> dict[str, Any]:
        if isinstance(data, dict) and "device" in data:
            data = {k: v for k, v in data.items() if k != "device"}
        return super().run_validation(data)


class _Layer(serializers.Serializer[dict[str, Any]]):
    kind = serializers.CharField(
        help_text="a torch.nn class name, or one of the advisor's: RBM, Reshape, LastStep, CausalConv1d, "
        "Gaussian, Residual, Concat (docs/CANDIDATE.md)"
    )
    args = serializers.DictField(help_text="the constructor's keyword arguments")


class _Reason(serializers.Serializer[dict[str, Any]]):
    rule = serializers.CharField()
    text = serializers.CharField()
    source = serializers.CharField()  # type: ignore[assignment]  # the citation, not Field.source


class _Estimate(serializers.Serializer[dict[str, Any]]):
    seconds_per_batch = serializers.FloatField()
    seconds_per_epoch = serializers.FloatField()
    seconds_to_train = serializers.FloatField()
    basis = serializers.ChoiceField(
        ["catalog", "profiled", "predicted", "measured"],
        help_text="catalog: the catalog's peaks (hardware not profiled); profiled: the device's measured "
        "rates; predicted: the profile corrected by the model learned from calibrations; measured: a "
        "calibration",
    )
    expected_error = serializers.FloatField(
        required=False, help_text="the relative error band this basis's validation supports (0.2: +-20%)"
    )
    interval = serializers.DictField(
        child=serializers.ListField(child=serializers.FloatField(), min_length=2, max_length=2),
        required=False,
        help_text="90% bounds [low, high] of seconds_per_batch, seconds_per_epoch and seconds_to_train, from "
        "the 5th and 95th percentiles of measured / estimated over the basis's validation",
    )
    correction = serializers.DictField(
        required=False,
        help_text="profiled or predicted, on a device with a learned model: used (whether it timed this), "
        "text (why), rows, networks, median_error (the correction's, networks left out), "
        "profile_median_error (the profile's on the same rows)",
    )
    scaling = serializers.DictField(
        required=False,
        help_text="only on several data-parallel devices: how the time was divided, basis 'W §III-H "
        "constant' (cut_per_doubling) or 'measured' (efficiency, calibration, device, world_sizes, "
        "extrapolated); time = one device's / (devices x efficiency)",
    )


class _Candidate(serializers.Serializer[dict[str, Any]]):
    family = serializers.ChoiceField(families.KEYS)
    depth = serializers.ChoiceField(["shallow", "deep"])
    published = serializers.CharField(allow_null=True)
    networks = serializers.DictField(child=_Layer(many=True))
    hidden_sizes = serializers.ListField(child=serializers.IntegerField())
    parameters = serializers.IntegerField()
    flops_per_example = serializers.IntegerField()
    training = serializers.DictField()
    memory_bytes = serializers.DictField(child=serializers.IntegerField())
    resident_bytes = serializers.IntegerField(allow_null=True, required=False)
    estimate = _Estimate()
    reasons = _Reason(many=True)


class _Plan(serializers.Serializer[dict[str, Any]]):
    device = serializers.ChoiceField(["cpu", "gpu"])
    threads = serializers.IntegerField()
    gpus = serializers.IntegerField()
    nodes = serializers.IntegerField()
    parallelism = serializers.ChoiceField(["none", "data", "model", "hybrid"])
    sync = serializers.ChoiceField(["none", "sync", "mixed", "async"])
    reasons = _Reason(many=True)


class _Warning(serializers.Serializer[dict[str, Any]]):
    field = serializers.CharField(help_text="the TaskSpec's dotted path, e.g. hardware.ram_gb")
    message = serializers.CharField()


class RecommendationSerializer(serializers.Serializer[dict[str, Any]]):
    """The engine's answer as stored, with measured estimates merged in (queries.recommendation_payload);
    used for the schema only: the payload is already the contract's JSON."""

    id = serializers.IntegerField()
    engine_version = serializers.IntegerField(
        help_text="the engine's version that made it (bumped when a rule changes); 0: made before versions "
        "were recorded"
    )
    spec = TaskSpecSerializer()
    candidates = _Candidate(many=True)
    hardware_plan = _Plan()
    dataflow = serializers.DictField()
    reasons = _Reason(many=True)
    warnings = _Warning(
        many=True, help_text="hardware or targets that contradict themselves (advice still follows them)"
    )
