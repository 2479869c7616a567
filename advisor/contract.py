"""The core data of the public contract as types (docs/CONTRACT.md, docs/CANDIDATE.md): the candidate, its
estimate, one measured configuration and a probe's verdict. Pure declarations: no Django, no torch, so the
engine, the calibration, the probe and the Django side all name the same shapes.

The JSON stays plain dicts (stored in JSONFields, sent as is); these TypedDicts say what a dict holds where it
crosses a boundary. Fields marked NotRequired appear only in some cases, as the contract says.
"""

from __future__ import annotations

from typing import Any, NotRequired, TypedDict


class Layer(TypedDict):
    kind: str  # a torch.nn class name, or RBM, Reshape, LastStep, Residual, Concat
    args: dict[str, Any]


class Reason(TypedDict):
    rule: str
    text: str
    source: str


class Io(TypedDict):
    input_shape: list[int]
    input_dtype: str  # "float32", or "int64" for token ids
    vocab_size: int | None
    target: str  # "class", "class_per_step", "value", "input", "none"
    outputs: int | None
    latent_size: int | None


class Training(TypedDict):
    batch_size: int
    init_scale: float
    optimizer: str
    learning_rate: float
    epochs: int
    loss: str
    momentum: NotRequired[float]
    betas: NotRequired[list[float]]  # Adam's (beta1, beta2) where a rule sets them (DCGAN's image GANs)


class MemoryBytes(TypedDict):
    weights: int
    gradients: int
    optimizer: int
    activations: int
    total: int


class MeasuredAt(TypedDict):
    batch_size: int
    threads: int | None
    allocator: str
    device: str
    step: NotRequired[str]  # "mean" (predicts a real epoch) or "median" (older measurements)
    # the batch the sweep measured best per example where it is not the plan's (rule plan.measured)
    best_batch: NotRequired[int]


class Scaling(TypedDict):
    """How an estimate's time was divided over several data-parallel devices (only where devices > 1)."""

    basis: str  # "W §III-H constant" or "measured"
    efficiency: float  # throughput of the devices over that many times one device's
    cut_per_doubling: NotRequired[float]  # the constant's
    # measured only: the data-parallel calibration, its device, the world sizes it ran, and whether the
    # plan's device count lies past the largest of them (the measured loss per doubling carried on)
    calibration: NotRequired[int]
    device: NotRequired[str]
    world_sizes: NotRequired[list[int]]
    extrapolated: NotRequired[bool]


class Estimate(TypedDict):
    seconds_per_batch: float
    seconds_per_epoch: float
    seconds_to_train: float
    basis: str  # "catalog", "profiled", "predicted" or "measured"
    expected_error: NotRequired[float]  # the relative band the basis's validation supports
    batch_size: NotRequired[int]
    batches_per_epoch: NotRequired[int]
    devices: NotRequired[int]
    device: NotRequired[str]
    compute_seconds_per_epoch: NotRequired[float]
    data_seconds_per_epoch: NotRequired[float]
    scaling: NotRequired[Scaling]
    # measured estimates only
    analytic: NotRequired[dict[str, Any]]
    error_vs_analytic: NotRequired[float]
    measured_at: NotRequired[MeasuredAt]
    calibration: NotRequired[int]


class ProbeEstimate(TypedDict):
    """What a candidate's latest finished probe measured (a candidate's `accuracy_probe`)."""

    probe: int
    score: float
    metric: str | None
    expected: NotRequired[dict[str, Any] | None]
    time_to_target: NotRequired[dict[str, Any] | None]


class Candidate(TypedDict):
    family: str
    depth: str  # "shallow" or "deep"
    published: str | None
    networks: dict[str, list[Layer]]
    hidden_sizes: list[int]
    io: Io
    parameters: int
    flops_per_example: int
    activations_per_example: int
    training: Training
    memory_bytes: MemoryBytes
    resident_bytes: int | None  # CPU plans: simulated glibc heap + library code; None on a GPU
    reasons: list[Reason]
    estimate: Estimate
    accuracy_probe: NotRequired[ProbeEstimate]


class Measurement(TypedDict):
    """One measured configuration: advisor.calibration.measure()'s dict (the contract's fields; it carries
    more: the step's FLOPs formula, user and system time, page faults, the raw samples)."""

    status: str  # "ok" or "oom"
    message: str
    seconds_per_batch: float | None
    mean_seconds_per_batch: float | None
    # seconds to gather one shuffled batch from an in-memory data set of the job's size (calibration
    # children add it; absent from measure() called alone and from older results)
    gather_seconds_per_batch: NotRequired[float]
    iqr: float | None
    iterations: int
    examples_per_second: float | None
    peak_memory_bytes: int | None
    achieved_flops: float | None
    device: str
    threads: int | None
    batch_size: int
    allocator: str


class Verdict(TypedDict):
    """What a probe concludes: shallow or deep, on the sample and expected at full size."""

    text: str
    metric: str  # "accuracy", "r2" or "explained_variance"
    target: float | None
    chosen: str | None  # "shallow", "deep", or None when nothing was trained
    deep_needed: bool | None  # None when no network could be trained
    shallow_score: float | None
    deep_score: float | None
    baseline_score: float | None
    met: bool | None  # the chosen network's held-out score reached the target; None without a target or run
    expected: dict[str, Any] | None
    notes: list[str]
    reasons: list[dict[str, str]]
    time_to_target: NotRequired[dict[str, Any] | None]
