"""Tried and not adopted (README.md): the plan's configurations priced from the measured seconds per batch
(each finished one at its own, those ahead at the latest measured / modelled ratio of its thread count, or
the median of them), the pace then left to what a configuration's form misses. Replayed on every saved
run set of both hosts.

Rerun: python bench/results/queue_intel-xeon-2c_in-child-remeasure/reprice.py
"""

from __future__ import annotations

import json
import statistics
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

import advisor.engine.sweepplan as sp
from advisor.engine.remaining import Mark, WorkPlan
from bench.queue_forecast import replay, score

ROOT = Path(__file__).resolve().parents[3]
SETS = {
    "Intel held-out, 11-28 (6)": "queue_intel-xeon-2c_forecast-steps/held-out",
    "Intel before, today (4)": "queue_intel-xeon-2c_in-child-remeasure/before",
    "Intel after, today (6)": "queue_intel-xeon-2c_in-child-remeasure/runs",
    "AMD forecast-tail held-out (5)": "queue_amd-epyc-2c_forecast-tail/held-out",
    "AMD forecast-loaded held-out": "queue_amd-epyc-2c_forecast-loaded/held-out",
}
ORIGINAL = sp.with_measured


def per_batch_of(seconds: float, sweep: sp.SweepPlan) -> float:
    """The seconds per batch at which sp.configuration_seconds gives `seconds` (its inverse)."""
    fewest, past = max(sweep.min_iterations, sp.FEWEST_TIMED), sp.STEPS_PAST_SECONDS
    seconds -= sp.CONFIG_OVERHEAD_S
    short = (seconds - sweep.min_seconds) / (sweep.warmup + 1 + past)
    if short < sweep.min_seconds / (fewest - past):
        return max(0.0, short)
    return max(0.0, seconds / (sweep.warmup + 1 + fewest))


def repriced(how: str) -> Any:
    def with_measured(plan: WorkPlan, stored: Any, measured: list[sp.Timed], marks: list[Mark]) -> WorkPlan:
        out = ORIGINAL(plan, stored, measured, marks)
        sweep = sp.sweep_from_json(stored)
        done = measured[: max(0, int(marks[-1].done))] if marks else []
        if sweep is None or not done or sweep.batch_sizes or len(out.batches) != len(out.steps):
            return out
        planned = dict(zip(zip(plan.batches, plan.threads, strict=True), plan.steps, strict=True))
        ratios: dict[int, list[float]] = {}
        for b, t, s, unreliable in done:
            modelled = per_batch_of(planned[b, t], sweep) if (b, t) in planned else 0.0
            if modelled > 0 and not unreliable:
                ratios.setdefault(t, []).append(s / modelled)
        ratio = {t: r[-1] if how == "latest" else statistics.median(r) for t, r in ratios.items()}
        steps = list(out.steps)
        for k, (_, t) in enumerate(zip(out.batches, out.threads, strict=True)):
            if k < len(done):
                steps[k] = sp.configuration_seconds(done[k][2], sweep)
            elif t in ratio:
                steps[k] = sp.configuration_seconds(per_batch_of(steps[k], sweep) * ratio[t], sweep)
        return replace(out, steps=tuple(steps))

    return with_measured


def main() -> None:
    for how in ("today", "latest", "median"):
        sp.with_measured = ORIGINAL if how == "today" else repriced(how)  # replay imports it at call time
        cells = []
        for name, folder in SETS.items():
            inside = total = 0
            for path in sorted((ROOT / "bench" / "results" / folder).glob("*.json")):
                s = score(replay(json.loads(path.read_text())))["eta_from_25pct_of_run"]
                inside, total = inside + s["within"], total + s["n"]
            cells.append(f"{name} {inside}/{total} ({inside / total:.0%})")
        print(how, "|", " | ".join(cells))


if __name__ == "__main__":
    main()
