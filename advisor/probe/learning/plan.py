"""What one probe is asked to do: plain data, so it crosses into the child process as is (no torch here)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

FRACTIONS = (
    0.1,
    0.2,
    0.35,
    0.6,
)  # learning-curve shares of the training split; the whole split is the main run


@dataclass
class ProbePlan:
    sample_path: str
    goal: str
    target: float | None
    full_examples: int  # data.examples of the spec
    shallow: dict[str, Any] | None  # {"index": i, "candidate": {...}}
    deep: dict[str, Any] | None
    budget_s: float = 60.0
    deadline: float | None = None  # time.time() by which the probe must have answered (set by the runner)
    seed: int = 0
    device: str = "cpu"  # or "cuda:N": the worker's device
    fractions: list[float] = field(default_factory=lambda: list(FRACTIONS))
    seconds_per_epoch: dict[str, dict[str, Any]] = field(
        default_factory=dict
    )  # per role: {"seconds", "basis"}
    task: str = ""  # the spec's task: "generation" takes the generation probe (learning/generation.py)
    repeats: int | None = (
        None  # splits to score on; None: as many as the sample's size asks (data.repeats_for)
    )
    # for the next step (nextstep.py): the recommendation's candidates a probe could train, as
    # {"index", "candidate"}, and the indices the probes before this one in its chain tried
    candidates: list[dict[str, Any]] = field(default_factory=list)
    tried: list[int] = field(default_factory=list)
    previous: int | None = None  # the probe whose next step this one is
