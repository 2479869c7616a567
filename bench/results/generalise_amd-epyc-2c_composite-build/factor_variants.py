"""Re-score saved `bench generalise` runs with the step factor at 2 threads taken three ways (README.md):
today's (the 1-thread factor at every count), each count's own, and halfway between (geometric mean).

Run from the repository root:
    PYTHONPATH=. python bench/results/generalise_amd-epyc-2c_composite-build/factor_variants.py RUN.json ...
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path
from typing import Any

from advisor.engine import costmodel
from advisor.engine.profile import at_threads
from bench.generalise import score

TODAY = costmodel._step_cost


def step_cost_with(share: float) -> Any:
    """costmodel._step_cost whose factor at t threads is f1 x (ft / f1) ** share (0: today's)."""

    def cost(candidate: Any, batch_size: int, threads: int, profile: Any, *, with_factor: bool = True) -> Any:
        rates = at_threads(profile, threads)
        step = costmodel._STEPS[costmodel.family_of(candidate).step]
        compute, other = step(costmodel._Costing(candidate, batch_size, rates))
        factor = 1.0
        if with_factor:
            first = costmodel.factor_of(profile)
            own = costmodel.step_factor(rates) if threads != 1 else first
            factor = first * (own / first) ** share
        return costmodel.StepCost(factor * (compute + other), factor * compute, factor * other)

    return cost


def summary(rows: list[dict[str, Any]]) -> str:
    errors = [r["error"] for r in rows]
    within = sum(abs(e) <= 0.25 for e in errors) / len(errors)
    middle, signed = statistics.median(abs(e) for e in errors), statistics.median(errors)
    return f"n {len(errors)}, {within:.0%} within ±25%, median |e| {middle:.3f}, signed {signed:+.3f}"


def main(paths: list[str]) -> None:
    for path in paths:
        saved = json.loads(Path(path).read_text(encoding="utf-8"))
        for name, share in (("today", 0.0), ("own", 1.0), ("half", 0.5)):
            costmodel._step_cost = step_cost_with(share)
            costmodel._PUBLISHED.clear()
            quiet = [r for r in score(saved)["rows"] if r["quiet"]]
            by = {t: [r for r in quiet if r["threads"] == t] for t in (1, 2)}
            each = f"1 thread {summary(by[1])} | 2 threads {summary(by[2])}"
            print(f"{path} {name}: all {summary(quiet)} | {each}")
        costmodel._step_cost = TODAY


if __name__ == "__main__":
    main(sys.argv[1:])
