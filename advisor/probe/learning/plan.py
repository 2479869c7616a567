"""What one probe is asked to do: plain data, so it crosses into the child process as is (no torch here)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TypedDict

from advisor.contract import Candidate

FRACTIONS = (
    0.1,
    0.2,
    0.35,
    0.6,
)  # learning-curve shares of the training split; the whole split is the main run


class PlanEntry(TypedDict):
    """A candidate of the recommendation, addressed by its index (calibrations, probes and downloads all
    address candidates so)."""

    index: int
    candidate: Candidate


class EpochTime(TypedDict):
    """A candidate's seconds per epoch at full size, and where the figure comes from (its basis)."""

    seconds: float | None
    basis: str | None


@dataclass
class ProbePlan:
    sample_path: str
    goal: str
    target: float | None
    full_examples: int  # data.examples of the spec
    shallow: PlanEntry | None
    deep: PlanEntry | None
    budget_s: float = 60.0
    deadline: float | None = None  # time.time() by which the probe must have answered (set by the runner)
    seed: int = 0
    device: str = "cpu"  # or "cuda:N": the worker's device
    fractions: list[float] = field(default_factory=lambda: list(FRACTIONS))
    seconds_per_epoch: dict[str, EpochTime] = field(default_factory=dict)  # per role
    task: str = ""  # the spec's task: "generation" takes the generation probe (pipeline.probe_generation)
    repeats: int | None = (
        None  # splits to score on; None: as many as the sample's size asks (split.repeats_for)
    )
    # for the next step (nextstep.py): the recommendation's candidates a probe could train, and the indices
    # the probes before this one in its chain tried
    candidates: list[PlanEntry] = field(default_factory=list)
    tried: list[int] = field(default_factory=list)
    previous: int | None = None  # the probe whose next step this one is
    previous_score: float | None = None  # the score that probe reported (its verdict's chosen network's)
    # the change this probe's candidate carries against the recommendation's ({"width": 2}, {"weight_decay":
    # 0.001}: advisor/engine/variation.py; its plan entry holds the varied candidate), and the server's cap
    # on a probe's parameters (PROBE_MAX_PARAMETERS; None: none) that a widened next step must stay under
    variation: dict[str, float] = field(default_factory=dict)
    max_parameters: int | None = None
