"""A device's queue shared between its users: the order its worker takes queued jobs (`fair_order`) and each
one's expected start (`forecast`), from the running job's remaining time and the expected durations of the
jobs before it (engine.remaining).

No Django, no torch.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Waiting:
    """A queued job of any kind on one device."""

    key: tuple[str, int]  # (kind, primary key)
    owner: int
    queued_at: float  # its creation, as a timestamp
    expected_s: float  # how long it will run once started
    first: bool = False  # a spread calibration's rank whose peers already run: it goes before everyone


@dataclass(frozen=True)
class Slot:
    key: tuple[str, int]
    position: int  # 1: next to start
    starts_in_s: float | None  # None: the device is drained, nothing starts until it is undrained


def fair_order(waiting: Sequence[Waiting], last_use: dict[int, float]) -> list[Waiting]:
    """The order a device takes its queued jobs: least-recent use between users. The next job is the oldest
    of the user whose last job on this device started longest ago (never: first; a tie: the user whose
    oldest queued job is older), and that user counts as using it now. So one user's ten queued jobs make
    another's first wait behind one of them at most. A spread rank whose peers already run goes first (they
    wait for it at the rendezvous)."""
    used = dict(last_use)
    pending = sorted(waiting, key=lambda w: (w.queued_at, w.key))
    order: list[Waiting] = []
    clock = max(used.values(), default=0.0)
    while pending:
        urgent = [w for w in pending if w.first]
        if urgent:
            chosen = urgent[0]
        else:
            chosen = min(pending, key=lambda w: (used.get(w.owner, -math.inf), w.queued_at, w.key))
        pending.remove(chosen)
        clock += 1.0
        used[chosen.owner] = clock
        order.append(chosen)
    return order


def forecast(
    waiting: Sequence[Waiting], last_use: dict[int, float], *, busy_for_s: float, drained: bool = False
) -> list[Slot]:
    """Each queued job's place in the device's fair-share order and its expected start in seconds from now:
    after the running job's remaining `busy_for_s` and the expected durations of the jobs before it."""
    slots, at = [], busy_for_s
    for position, w in enumerate(fair_order(waiting, last_use), start=1):
        slots.append(Slot(w.key, position, None if drained else at))
        at += w.expected_s
    return slots
