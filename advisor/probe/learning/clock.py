"""The probe's clock and voice: the time left of its budget, and the events it emits as it goes (a progress
line, or a stage's results, saved by the worker as they arrive so that a stopped probe keeps what it
measured). Every step of the pipeline (pipeline.py) takes the one clock its run started."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Literal, TypedDict

from advisor.probe.learning.plan import ProbePlan

EMIT_EVERY_S = 0.5  # at most this often a stage is re-sent while it runs (an epoch, an evaluation)


class Progress(TypedDict):
    type: Literal["progress"]
    done: float  # the share of the time limit spent, below 1 until the verdict
    total: int
    step: str  # what the probe is doing, in words


class Stage(TypedDict):
    type: Literal["stage"]
    stage: str  # "split", "baseline", "shallow", "deep", "curve", "generator" or "verdict"
    data: object  # the stage's results as stored under results[stage] (docs/CONTRACT.md)


Emit = Callable[[Progress | Stage], None]


class Clock:
    def __init__(self, budget_s: float, emit: Emit, should_stop: Callable[[], bool]) -> None:
        self.start = time.monotonic()
        self.deadline = self.start + budget_s
        self.budget = budget_s
        self.emit = emit
        self.should_stop = should_stop
        self.last_emit = 0.0

    @classmethod
    def of(cls, plan: ProbePlan, emit: Emit, should_stop: Callable[[], bool]) -> Clock:
        """The plan's budget, cut to its deadline (the child's soft limit) where it has one."""
        budget = plan.budget_s if plan.deadline is None else min(plan.budget_s, plan.deadline - time.time())
        return cls(max(budget, 0.5), emit, should_stop)

    def left(self) -> float:
        return max(0.0, self.deadline - time.monotonic())

    def stop(self) -> bool:
        return self.left() <= 0 or self.should_stop()

    def due(self) -> bool:
        """Whether a running stage may be re-sent now."""
        return time.monotonic() - self.last_emit >= EMIT_EVERY_S

    def progress(self, step: str, floor: float = 0.0) -> None:
        done = max(floor, min(0.99, (time.monotonic() - self.start) / max(self.budget, 1e-9)))
        self.emit({"type": "progress", "done": round(done, 3), "total": 1, "step": step})

    def stage(self, name: str, payload: object, *, force: bool = True) -> None:
        now = time.monotonic()
        if force or now - self.last_emit >= EMIT_EVERY_S:
            self.last_emit = now
            self.emit({"type": "stage", "stage": name, "data": payload})
