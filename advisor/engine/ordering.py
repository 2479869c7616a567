"""Time to the target decides the order (rule net.time.first): among the candidates the rules expect to reach
the target (a draft's `contends`), the one the device is predicted to bring there soonest comes first.

The predicted time is the candidate's seconds per epoch (the device's profile through the cost model where
the recommendation has one, else the catalog estimate) times the epochs it needs (its `training.epochs`: the
rules give every network of a task the same budget, so among them the seconds per epoch decide). The
contenders are sorted into the places they hold; the other candidates keep theirs. The order is fixed when
the recommendation is made (calibrations, probes and exports address candidates by index).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from advisor.contract import Candidate, Reason
from advisor.engine.families import title_of
from advisor.engine.rules import reason

Timing = Callable[[Candidate], tuple[float, str]]  # a candidate -> (seconds per epoch, where it is from)


@dataclass(frozen=True)
class Timed:
    place: int  # its index in the rules' order
    seconds_per_epoch: float
    epochs: int
    basis: str

    @property
    def seconds(self) -> float:
        return self.seconds_per_epoch * self.epochs


def time_first(
    candidates: list[Candidate], contenders: list[int], timing: Timing, device: str
) -> tuple[list[Candidate], list[Reason]]:
    """The candidates with the contenders sorted by predicted time to the target (ties keep the rules'
    order), and the top-level reasons; each contender gets its own net.time.first reason. Fewer than two
    contenders: unchanged, no reason."""
    if len(contenders) < 2:
        return candidates, []
    timed = []
    for place in contenders:
        per_epoch, basis = timing(candidates[place])
        timed.append(Timed(place, per_epoch, int(candidates[place]["training"]["epochs"]), basis))
    ranked = sorted(timed, key=lambda t: (t.seconds, t.place))
    ordered = list(candidates)
    for slot, entry in zip(sorted(contenders), ranked, strict=True):
        ordered[slot] = candidates[entry.place]
    first = ranked[0]
    others = ", ".join(f"{_name(candidates[t.place])} {_duration(t.seconds)}" for t in ranked[1:])
    summary = (
        f"Of the {len(ranked)} networks expected to reach your target, the {_name(candidates[first.place])} "
        f"is predicted to get there soonest on {device}: {_duration(first.seconds_per_epoch)} per epoch x "
        f"{first.epochs} epochs = {_duration(first.seconds)} ({first.basis} estimate), against {others}."
    )
    for rank, entry in enumerate(ranked, start=1):
        candidates[entry.place]["reasons"].insert(
            0,
            reason(
                "net.time.first",
                f"Predicted {_duration(entry.seconds_per_epoch)} per epoch x {entry.epochs} epochs = "
                f"{_duration(entry.seconds)} to the target on {device} ({entry.basis} estimate): "
                f"{_ordinal(rank)} of the {len(ranked)} networks expected to reach it.",
            ),
        )
    return ordered, [reason("net.time.first", summary)]


def _name(candidate: Candidate) -> str:
    return title_of(str(candidate["family"]))


def _ordinal(rank: int) -> str:
    return {1: "the fastest", 2: "second", 3: "third"}.get(rank, f"number {rank}")


def _duration(seconds: float) -> str:
    for unit, scale in (("h", 3600.0), ("min", 60.0), ("s", 1.0), ("ms", 1e-3)):
        if seconds >= scale:
            return f"{seconds / scale:,.3g} {unit}"
    return f"{seconds * 1e6:,.3g} µs"
