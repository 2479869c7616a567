"""The TaskSpec and Recommendation as serializers.

Their fields document the contract in the OpenAPI schema; validation is the engine's alone: the TaskSpec
serializer hands the whole body to `advisor.engine.normalise`, whose SpecError.errors are the 400 answer."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers
from rest_framework.fields import empty

from advisor import contract, engine
from advisor.api.schema import request_body
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
    """A TaskSpec section's serializer, named for its component: TaskData, TaskHardware, TaskTarget."""
    fields = {f.name: _serializer_field(f) for f in FIELDS if f.section == name}
    return type(f"Task{name.title()}Serializer", (serializers.Serializer,), fields)


_Data, _Hardware, _Target = _section("data"), _section("hardware"), _section("target")


class TaskSpecSerializer(serializers.Serializer[contract.TaskSpec]):
    """What the user describes. The engine validates it; `validated_data` is the normalised spec."""

    task = _declared("task")
    generation = _declared("generation")
    goal = _declared("goal")
    hardware = _Hardware()
    target = _Target(required=False, allow_null=True)

    def get_fields(self) -> dict[str, serializers.Field[Any, Any, Any, Any]]:
        # the `data` section, after goal: a class attribute of that name would redefine Serializer.data
        fields = super().get_fields()
        first = {name: fields.pop(name) for name in ("task", "generation", "goal")}
        return {**first, "data": _Data(), **fields}

    def run_validation(self, data: Any = empty) -> contract.TaskSpec:
        try:
            return engine.normalise(None if data is empty else data)
        except engine.SpecError as exc:
            raise serializers.ValidationError(exc.errors) from None


@request_body
class RecommendationRequestSerializer(TaskSpecSerializer):
    """POST recommendations/: a TaskSpec, and optionally the device whose profile times it."""

    device = serializers.CharField(
        required=False,
        max_length=200,
        help_text="a device's id (GET devices/): estimates come from its profile (basis profiled) when it "
        "has one, else from the catalog",
    )

    def run_validation(self, data: Any = empty) -> contract.TaskSpec:
        if isinstance(data, dict) and "device" in data:
            data = {k: v for k, v in data.items() if k != "device"}
        return super().run_validation(data)


class LayerSerializer(serializers.Serializer[contract.Layer]):
    kind = serializers.CharField(
        help_text="a torch.nn class name, or one of the advisor's: RBM, Reshape, LastStep, PoolOverTime, "
        "CausalConv1d, Gaussian, Residual, Concat (docs/CANDIDATE.md)"
    )
    args = serializers.DictField(help_text="the constructor's keyword arguments")


class ReasonSerializer(serializers.Serializer[contract.Reason]):
    rule = serializers.CharField()
    text = serializers.CharField()

    def get_fields(self) -> dict[str, serializers.Field[Any, Any, Any, Any]]:
        # `source`, the citation: a class attribute of that name would redefine Field.source
        return {**super().get_fields(), "source": serializers.CharField()}


def _seconds_bounds() -> serializers.ListField:
    return serializers.ListField(child=serializers.FloatField(), min_length=2, max_length=2)


class IntervalSerializer(serializers.Serializer[contract.Interval]):
    """90% bounds [low, high] of each time, from the 5th and 95th percentiles of measured / estimated over
    the basis's validation."""

    seconds_per_batch = _seconds_bounds()
    seconds_per_epoch = _seconds_bounds()
    seconds_to_train = _seconds_bounds()


class CorrectionBasisSerializer(serializers.Serializer[contract.CorrectionBasis]):
    """Whether the device's learned correction timed an estimate, and why: it must beat the profile alone on
    the device's reliable measurements."""

    used = serializers.BooleanField()
    text = serializers.CharField()
    rows = serializers.IntegerField()
    networks = serializers.IntegerField()
    median_error = serializers.FloatField(help_text="the correction's, networks left out")
    profile_median_error = serializers.FloatField(help_text="the profile's own on the same rows")


class ScalingSerializer(serializers.Serializer[contract.Scaling]):
    """How an estimate's time was divided over several data-parallel devices: time = one device's /
    (devices x efficiency)."""

    basis = serializers.ChoiceField(["W §III-H constant", "measured"])
    efficiency = serializers.FloatField()
    cut_per_doubling = serializers.FloatField(required=False, help_text="the constant's")
    calibration = serializers.IntegerField(
        required=False, help_text="measured: the data-parallel calibration"
    )
    device = serializers.CharField(required=False)
    world_sizes = serializers.ListField(child=serializers.IntegerField(), required=False)
    extrapolated = serializers.BooleanField(
        required=False, help_text="the plan's device count lies past the largest world size measured"
    )


class MeasuredAtSerializer(serializers.Serializer[contract.MeasuredAt]):
    """The configuration a measured estimate comes from."""

    batch_size = serializers.IntegerField()
    threads = serializers.IntegerField(allow_null=True)
    allocator = serializers.CharField()
    device = serializers.CharField()
    step = serializers.CharField(
        required=False, help_text="which per-batch figure predicts the epoch, e.g. trimmed mean + gathering"
    )
    best_batch = serializers.IntegerField(
        required=False, help_text="the batch the sweep measured best per example where it is not the plan's"
    )


class EstimateSerializer(serializers.Serializer[contract.Estimate]):
    """A candidate's time to train: from the catalog, the device's profile, its learned correction, or a
    calibration (a candidate's `estimate`, a calibration's `estimate`)."""

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
    interval = IntervalSerializer(required=False)
    correction = CorrectionBasisSerializer(
        required=False, help_text="profiled or predicted, on a device with a learned model"
    )
    batch_size = serializers.IntegerField(required=False)
    batches_per_epoch = serializers.IntegerField(required=False)
    devices = serializers.IntegerField(required=False)
    device = serializers.CharField(
        required=False,
        help_text="the catalog device's description (catalog), or the id of the device that timed it",
    )
    compute_seconds_per_epoch = serializers.FloatField(required=False)
    data_seconds_per_epoch = serializers.FloatField(required=False)
    scaling = ScalingSerializer(required=False, help_text="only on several data-parallel devices")
    analytic = serializers.DictField(
        required=False, help_text="measured only: the estimate before the measurement, at that batch"
    )
    error_vs_analytic = serializers.FloatField(
        required=False, help_text="measured only: (analytic - measured) / measured"
    )
    measured_at = MeasuredAtSerializer(required=False)
    calibration = serializers.IntegerField(required=False, help_text="measured only: the calibration's id")


class IoSerializer(serializers.Serializer[contract.Io]):
    input_shape = serializers.ListField(child=serializers.IntegerField())
    input_dtype = serializers.ChoiceField(["float32", "int64"], help_text="int64: token ids")
    vocab_size = serializers.IntegerField(allow_null=True)
    target = serializers.ChoiceField(["class", "class_per_step", "value", "input", "none"])
    outputs = serializers.IntegerField(allow_null=True)
    latent_size = serializers.IntegerField(allow_null=True)


class TrainingSerializer(serializers.Serializer[contract.Training]):
    batch_size = serializers.IntegerField()
    init_scale = serializers.FloatField()
    optimizer = serializers.CharField()
    learning_rate = serializers.FloatField()
    epochs = serializers.IntegerField()
    loss = serializers.CharField()
    init = serializers.CharField(required=False, help_text="uniform_fan_in; absent for RBM and DBN")
    momentum = serializers.FloatField(required=False, help_text="with sgd")
    betas = serializers.ListField(
        child=serializers.FloatField(),
        required=False,
        help_text="Adam's (beta1, beta2), where a rule sets them",
    )
    weight_decay = serializers.FloatField(
        required=False, help_text="a probe's next step against over-fitting: the candidate with weight decay"
    )
    prior = serializers.ChoiceField(
        ["mixture"],
        required=False,
        help_text="a Gaussian VAE: new codes from a mixture fitted to its training codes",
    )


class MemoryBytesSerializer(serializers.Serializer[contract.MemoryBytes]):
    """The peak of live bytes in one training step (`total`) and its make-up then, which sums to it."""

    weights = serializers.IntegerField()
    gradients = serializers.IntegerField()
    optimizer = serializers.IntegerField()
    activations = serializers.IntegerField()
    batch = serializers.IntegerField(help_text="inputs and targets")
    workspace = serializers.IntegerField(help_text="gradient buffers in flight, the optimiser's temporaries")
    total = serializers.IntegerField()


class ProbeEstimateSerializer(serializers.Serializer[contract.ProbeEstimate]):
    """What a candidate's latest finished probe measured."""

    probe = serializers.IntegerField()
    score = serializers.FloatField()
    metric = serializers.CharField(allow_null=True)
    expected = serializers.DictField(required=False, allow_null=True)
    time_to_target = serializers.DictField(required=False, allow_null=True)
    expected_first = serializers.BooleanField(
        required=False,
        help_text="true on the one probed candidate the probes' curves expect to reach the target first",
    )


class CandidateSerializer(serializers.Serializer[contract.Candidate]):
    family = serializers.ChoiceField(families.KEYS)
    depth = serializers.ChoiceField(["shallow", "deep"])
    published = serializers.CharField(allow_null=True)
    networks = serializers.DictField(child=LayerSerializer(many=True))
    hidden_sizes = serializers.ListField(child=serializers.IntegerField())
    io = IoSerializer()
    parameters = serializers.IntegerField()
    flops_per_example = serializers.IntegerField()
    activations_per_example = serializers.IntegerField()
    training = TrainingSerializer()
    memory_bytes = MemoryBytesSerializer()
    resident_bytes = serializers.IntegerField(allow_null=True)
    reasons = ReasonSerializer(many=True)
    estimate = EstimateSerializer()
    accuracy_probe = ProbeEstimateSerializer(required=False)


class HardwarePlanSerializer(serializers.Serializer[contract.HardwarePlan]):
    device = serializers.ChoiceField(["cpu", "gpu"])
    threads = serializers.IntegerField()
    threads_basis = serializers.ChoiceField(
        ["cores", "profiled", "measured"], required=False, help_text="where `threads` comes from"
    )
    gpus = serializers.IntegerField()
    nodes = serializers.IntegerField()
    parallelism = serializers.ChoiceField(["none", "data", "model", "hybrid"])
    sync = serializers.ChoiceField(["none", "sync", "mixed", "async"])
    reasons = ReasonSerializer(many=True)


class PlausibilityWarningSerializer(serializers.Serializer[contract.PlausibilityWarning]):
    field = serializers.CharField(help_text="the TaskSpec's dotted path, e.g. hardware.ram_gb")
    message = serializers.CharField()


class RecommendationSerializer(serializers.Serializer[contract.Recommendation]):
    """The engine's answer as stored, with measured estimates merged in (queries.recommendation_payload);
    used for the schema only: the payload is already the contract's JSON."""

    id = serializers.IntegerField()
    engine_version = serializers.IntegerField(
        help_text="the engine's version that made it (bumped when a rule changes); 0: made before versions "
        "were recorded"
    )
    spec = TaskSpecSerializer()
    candidates = CandidateSerializer(many=True)
    hardware_plan = HardwarePlanSerializer()
    dataflow = serializers.DictField()
    reasons = ReasonSerializer(many=True)
    warnings = PlausibilityWarningSerializer(
        many=True, help_text="hardware or targets that contradict themselves (advice still follows them)"
    )
