"""How long a sweep's configuration takes at its measured seconds per batch: the form before (150 ms, then
the minimums exactly) and today's `sweepplan.configuration_seconds`, against every configuration of the
saved quiet `bench queue --forecast` runs (the time between its two progress marks); and the search that
chose today's constants, on the runs before `../queue_amd-epyc-2c_forecast-tail/` only. Judged on that
folder's runs (the AMD host, AVX512) and on this folder's `held-out/` (this Intel host).

    PYTHONPATH=. python bench/results/queue_intel-xeon-2c_forecast-steps/steps.py
"""

from __future__ import annotations

import glob
import json
import math
import os
import statistics
import sys
from collections.abc import Callable
from typing import Any

sys.path.insert(0, os.path.dirname(__file__))

from replan import before

from advisor.engine.sweepplan import SweepPlan, configuration_seconds, sweep_from_json

RESULTS = "bench/results"
Row = tuple[float, float, SweepPlan]  # seconds per batch, the configuration's seconds, its sweep


def rows_of(files: list[str]) -> list[Row]:
    """Each first-child configuration of the quiet runs' jobs: its measured step and how long it took."""
    rows: list[Row] = []
    for path in files:
        with open(path) as f:
            run: dict[str, Any] = json.load(f)
        if "jobs" not in run or (run.get("load") or {}).get("processes"):
            continue
        for job in run["jobs"]:
            sweep, marks, measured = sweep_from_json(job["planned"]), job["marks"], job.get("measured")
            if sweep is None or not measured or not marks:
                continue
            first = [m for m in measured if m[3] == measured[0][3]]
            for k, m in enumerate(first):
                if k + 1 < len(marks) and m[2]:
                    rows.append((m[2], marks[k + 1][0] - marks[k][0], sweep))
    return rows


def form(overhead: float, fewest: int, past: int) -> Callable[[float, SweepPlan], float]:
    def seconds(p: float, sweep: SweepPlan) -> float:
        timed = max(max(sweep.min_iterations, fewest) * p, sweep.min_seconds + past * p)
        return overhead + (sweep.warmup + 1) * p + timed

    return seconds


def score(rows: list[Row], model: Callable[[float, SweepPlan], float]) -> str:
    errors = [abs(math.log(model(p, s) / took)) for p, took, s in rows]
    inside = sum(e < math.log(1.1) for e in errors)
    return f"median |log ratio| {statistics.median(errors):.3f}, within 10%: {inside}/{len(errors)}"


def main() -> None:
    held_out = sorted(glob.glob(f"{RESULTS}/queue_amd-epyc-2c_forecast-tail/*/*.json"))
    every = sorted(glob.glob(f"{RESULTS}/queue_amd-epyc-2c_forecast*/**/*.json", recursive=True))
    fit = rows_of([f for f in every if f not in held_out and "forecast-steps" not in f])
    test = rows_of(held_out)
    here = rows_of(sorted(glob.glob(f"{RESULTS}/queue_intel-xeon-2c_forecast-steps/held-out/*.json")))
    print(f"built on {len(fit)} (AMD, AVX2); held out {len(test)} (AMD, AVX512), {len(here)} (Intel)")
    grid = [(o, n, k) for o in (0.02, 0.04, 0.06, 0.08, 0.1, 0.15) for n in range(5, 16) for k in range(1, 9)]
    best = min(grid, key=lambda g: statistics.median(abs(math.log(form(*g)(p, s) / t)) for p, t, s in fit))
    print(f"search: overhead {best[0]} s, at least {best[1]} timed steps, {best[2]} past min_seconds")
    bands = [(0, 0.002), (0.002, 0.01), (0.01, 0.05), (0.05, 0.1), (0.1, 0.2), (0.2, 1.0)]
    for name, rows in (("built on", fit), ("held out, AMD", test), ("held out, Intel", here)):
        print(f"\n{name}: before: {score(rows, before)}; today: {score(rows, configuration_seconds)}")
        for lo, hi in bands:
            band = [r for r in rows if lo <= r[0] < hi]
            ratios = [t / before(p, s) for p, t, s in band]
            today = [t / configuration_seconds(p, s) for p, t, s in band]
            if band:
                was, now = statistics.median(ratios), statistics.median(today)
                print(
                    f"  step {lo * 1000:4.0f}-{hi * 1000:4.0f} ms: {len(band):4d} configurations, took / "
                    f"planned median {was:.2f} before, {now:.2f} today"
                )


if __name__ == "__main__":
    main()
