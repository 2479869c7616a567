"""What the pages show of a recommendation, as types: the views advisor/web/present.py makes of the
contract's data (a candidate, its estimate, its networks' diagrams, its memory) for the templates."""

from __future__ import annotations

from typing import NotRequired, TypedDict

from advisor.contract import (
    Candidate,
    CorrectionBasis,
    Dataflow,
    HardwarePlan,
    MeasuredAt,
    PlausibilityWarning,
    Reason,
)


class NetworkRow(TypedDict):
    """A layer with weights or a shape change (the input first), with the element-wise layers after it."""

    kind: str
    detail: str
    shape: tuple[int, ...] | None  # None where it could not be counted
    parameters: int | None
    flops: int | None
    then: list[str]
    style: str  # "io", "dense", "conv", "pool", "recurrent" or "other"


class DiagramRow(NetworkRow):
    """A row as the diagram draws it: its bar and its texts."""

    y: int
    text_y: int
    x: float
    width: float
    shape_text: str
    label: str
    note: str
    params_text: str


class Diagram(TypedDict):
    """SVG geometry of one network (templates/advisor/_diagram.html)."""

    name: str
    rows: list[DiagramRow]
    hidden: int  # rows past MAX_ROWS, not drawn
    layers_text: str
    width: int
    height: int
    description: str


class MemoryRow(TypedDict):
    key: str
    label: str
    bytes: str
    share: float
    x: float  # where its part of the bar starts, percent
    w: float  # its width, percent


class IntervalView(TypedDict, total=False):
    """An estimate's 90% interval as the pages write it; empty where the estimate has none."""

    band: str
    per_batch_range: str
    per_epoch_range: str
    to_train_range: str


class ScalingView(TypedDict):
    """A multi-device time's division (contract.Scaling) with its figures as they read."""

    basis: str
    efficiency: float
    cut_per_doubling: NotRequired[float]
    calibration: NotRequired[int]
    device: NotRequired[str]
    world_sizes: str  # "1, 2, 4"
    extrapolated: NotRequired[bool]
    measured: bool
    efficiency_percent: str
    cut_percent: str


class PriorView(TypedDict):
    """The estimate before a measurement, beside it."""

    basis: str
    device: str | None
    error: float | None
    band: str
    name: str


class EstimateView(TypedDict):
    """An estimate's times with their basis, as the pages show it."""

    basis: str
    name: str
    per_batch: str
    per_epoch: str
    to_train: str
    batch_size: int | None
    calibration: int | None
    measured_at: MeasuredAt | None
    error: float | None
    band: NotRequired[str]
    per_batch_range: NotRequired[str]
    per_epoch_range: NotRequired[str]
    to_train_range: NotRequired[str]
    correction: CorrectionBasis | None
    device: str | None
    devices: int
    scaling: ScalingView | None
    analytic_to_train: str | None
    prior: PriorView | None
    ratio: float | None  # measured over the estimate before it


class CandidateView(TypedDict):
    """A candidate as the pages show it; the recommendation page adds its drawings and memory, the wizard's
    preview its alternatives, plan, summary and warnings."""

    index: int
    c: Candidate
    title: str
    early_stopping: bool
    loss: str | None
    parameters: str
    flops: str
    memory_total: str
    estimate: EstimateView
    diagrams: NotRequired[list[Diagram]]
    memory: NotRequired[list[MemoryRow]]
    memory_notes: NotRequired[dict[str, str]]
    alternatives: NotRequired[list[str]]
    plan: NotRequired[HardwarePlan]
    summary: NotRequired[list[tuple[str, str]]]
    warnings: NotRequired[list[PlausibilityWarning]]


class RecommendationView(TypedDict):
    candidates: list[CandidateView]
    plan: HardwarePlan
    flow: Dataflow
    flow_rows: list[tuple[str, str, bool]]  # (label, value, is a time)
    reasons: list[Reason]
