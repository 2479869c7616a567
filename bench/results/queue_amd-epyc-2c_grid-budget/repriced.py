"""The saved `bench queue --forecast` grid runs (the Intel Xeon VM's, ../queue_intel-xeon-2c_grid/, and this
folder's, the AMD EPYC VM's) replayed by today's estimator (bench.queue_forecast.replay) under variations of
their plans. Nothing is measured; the plans are changed in this process only.

1. The budget: each grid's plan with the budget its child stops at (engine.sweepplan._sweep_plan since this
   folder's change), against the plan as saved (none: "measured in full").
2. The default allocator's fresh mappings: each configuration's planned seconds per batch (recovered from its
   planned seconds, sweepplan.configuration_seconds inverted) plus, for every block over glibc's 32 MiB mmap
   ceiling a step allocates (the memory model's replay, ../queue_intel-xeon-2c_grid/mapped.py; the weights
   and the optimiser's state are mapped once), `factor` x fill.py's cost of faulting it in. Judged by each
   configuration's seconds, each whole job's, the waits behind them, and the ETA under three pace rules.
3. A ceiling: each configuration priced at the seconds per batch it went on to measure.

Rerun: python bench/results/queue_amd-epyc-2c_grid-budget/repriced.py
"""

from __future__ import annotations

import json
import statistics
import sys
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[3]
GRID = ROOT / "bench/results/queue_intel-xeon-2c_grid"
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(GRID))

from mapped import CEILING, allocations  # noqa: E402

import advisor.engine.remaining as rm  # noqa: E402
from advisor.engine import recommend  # noqa: E402
from advisor.engine.remaining import expected_duration, marks_from_json, plan_from_json  # noqa: E402
from advisor.engine.sweepplan import SweepPlan, configuration_seconds, sweep_from_json  # noqa: E402
from bench.queue_forecast import FORECAST_SPECS, HARDWARE, replay, score  # noqa: E402

HERE = Path(__file__).resolve().parent
SETS = {
    "grids, built on (3)": sorted(GRID.glob("runs/build-grid*.json")),
    "grids, held out before (2)": sorted(GRID.glob("runs/held-out-grid-*.json")),
    "grids, held out after (2)": sorted(HERE.glob("runs/*.json")),
}
KEYS = {"eta_from_25pct_of_run": "from 25% of run", "eta_from_25pct_reported": "from 25% reported"}
# fill.py on the AMD EPYC VM (AVX2), one thread (0.38-0.40 in three runs); the grids built on and held out
# before ran on the Intel Xeon VM, whose allocators.py rows imply 0.28-0.29 ms per MiB: 0.72 of it (two
# hosts' figures in one ratio, so both prices are tried)
FILL_MS_PER_MIB = 0.39
FACTORS = (0.72, 1.0)
ONCE = ("weights", "optimizer")  # live for the whole run: mapped once


def _median_rule(runs: list[float], pace: float) -> float:
    return statistics.median([*runs, pace])


# engine.remaining.thread_pace and two rules in its place
RULES: dict[str, Callable[[list[float], float], float]] = {
    "latest, cap 2x (today)": rm.thread_pace,
    "median": _median_rule,
    "min(latest, median)": lambda r, p: min(r[-1], _median_rule(r, p)),
}


@cache
def _mapped_mib(spec: str, family: str, batch: int) -> float:
    answer = recommend({**FORECAST_SPECS[spec], "hardware": HARDWARE})
    cand = next(c for c in answer["candidates"] if c["family"] == family)
    return sum(n for cat, n in allocations(cand, batch) if n > CEILING and cat not in ONCE) / 2**20


def _per_batch(seconds: float, sweep: SweepPlan) -> float:
    """The seconds per batch configuration_seconds priced at `seconds` (increasing in it: bisection)."""
    lo, hi = 0.0, seconds
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if configuration_seconds(mid, sweep) < seconds else (lo, mid)
    return (lo + hi) / 2


def budgeted(job: dict[str, Any]) -> dict[str, Any]:
    """The job's plan with the budget its child stops at, as the plan now carries it."""
    plan = job["planned"]
    return {**job, "planned": {**plan, "steps_budget_s": plan["sweep"]["budget_s"]}}


def with_faults(job: dict[str, Any], factor: float) -> dict[str, Any]:
    plan = job["planned"]
    sweep = sweep_from_json(plan)
    assert sweep is not None
    ms = factor * FILL_MS_PER_MIB
    steps = [
        configuration_seconds(
            _per_batch(s, sweep) + ms * _mapped_mib(job["spec"], job["family"], b) / 1e3, sweep
        )
        for s, b in zip(plan["steps"], plan["batches"], strict=True)
    ]
    return {**job, "planned": {**plan, "steps": steps}}


def measured_exactly(job: dict[str, Any]) -> dict[str, Any]:
    """Each configuration priced at the seconds per batch its first child went on to measure."""
    plan = job["planned"]
    sweep = sweep_from_json(plan)
    assert sweep is not None
    first = job["measured"][0][3] if job["measured"] else None
    took = {(b, t): s for b, t, s, allocator, *_ in job["measured"] if allocator == first and s}
    steps = [
        configuration_seconds(took[b, t], sweep) if (b, t) in took else s
        for s, b, t in zip(plan["steps"], plan["batches"], plan["threads"], strict=True)
    ]
    return {**job, "planned": {**plan, "steps": steps}}


def eta_cells(runs: list[dict[str, Any]]) -> list[str]:
    again = [replay(run) for run in runs]
    cells = []
    for key in KEYS:
        inside = sum(score(run).get(key, {}).get("within", 0) for run in again)
        total = sum(score(run).get(key, {}).get("n", 0) for run in again)
        cells.append(f"{inside}/{total} ({inside / total:.0%})" if total else "-")
    return cells


def _jobs(
    runs: list[dict[str, Any]], change: Callable[[dict[str, Any]], dict[str, Any]]
) -> list[dict[str, Any]]:
    return [{**run, "jobs": [change(j) for j in run["jobs"]]} for run in runs]


def table(title: str, rows: dict[str, list[str]]) -> None:
    print(f"\n{title}")
    print(f"{'':<44}" + "".join(f"{label:>24}" for label in KEYS.values()))
    for name, cells in rows.items():
        print(f"{name:<44}" + "".join(f"{c:>24}" for c in cells))


def _within(ratios: list[float]) -> str:
    return f"{sum(abs(r - 1) <= 0.25 for r in ratios)}/{len(ratios)}"


def durations(name: str, runs: list[dict[str, Any]], *, loaded: bool = False) -> None:
    """Large-batch configurations' taken / planned, whole jobs' and the waits behind them."""
    where = "beside a busy loop" if loaded else "quiet"
    print(f"\n{name}, {where}: taken / planned of CNN and LSTM configurations at batch >= 512, of whole")
    print("jobs, and of each wait over 1 s against the planned durations of the jobs before it")
    print(
        f"{'plan':<30}{'configurations (median, p10-p90)':>36}{'jobs within 25%':>18}{'waits within 25%':>18}"
    )
    for label, factor in (("as saved", 0.0), *((f"with faults x{f:g}", f) for f in FACTORS)):
        configs, jobs, waits = [], [], []
        for run in runs:
            done = [j for j in run["jobs"] if j["duration"]]
            priced = [with_faults(j, factor) for j in done]
            for j in priced:
                plan = j["planned"]
                for k, _, seconds in rm._whole_steps(marks_from_json(j["marks"])):
                    if (
                        j["family"] in ("cnn", "lstm")
                        and k < len(plan["steps"])
                        and plan["batches"][k] >= 512
                    ):
                        configs.append(seconds / plan["steps"][k])
                jobs.append(j["duration"] / expected_duration(plan_from_json(plan, 0.0)))
            ahead = 0.0
            for j in sorted(priced, key=lambda j: j["actual_wait"]):
                if j["actual_wait"] > 1:
                    waits.append(j["actual_wait"] / ahead)
                ahead += expected_duration(plan_from_json(j["planned"], 0.0))
        q = statistics.quantiles(configs, n=10)
        spread = f"{statistics.median(configs):.2f} ({q[0]:.2f}-{q[-1]:.2f})"
        print(f"{label:<30}{spread:>36}{_within(jobs):>18}{_within(waits):>18}")


def main() -> None:
    today = rm.thread_pace
    runs = {name: [json.loads(p.read_text()) for p in paths] for name, paths in SETS.items() if paths}
    before = {k: v for k, v in runs.items() if "after" not in k}
    rows = {}
    for name, saved in before.items():
        rows[f"{name}: as saved"] = eta_cells(saved)
        rows[f"{name}: with the budget"] = eta_cells(_jobs(saved, budgeted))
    for name, saved in runs.items():
        if "after" in name:  # run with the budget; without it, as the plan was before
            rows[f"{name}: without the budget"] = eta_cells(
                _jobs(saved, lambda j: {**j, "planned": {**j["planned"], "steps_budget_s": None}})
            )
            rows[f"{name}: as run (the budget)"] = eta_cells(saved)
    table("1. ETA samples within ±25%, the grid's budget in its plan or not", rows)

    for name, rs in runs.items():
        durations(name, [r for r in rs if not r["load"]["processes"]])
        durations(name, [r for r in rs if r["load"]["processes"]], loaded=True)

    withb = {name: rs if "after" in name else _jobs(rs, budgeted) for name, rs in runs.items()}
    rows = {}
    for rule, aggregate in RULES.items():
        rm.thread_pace = aggregate
        for factor in (0.0, *FACTORS):
            cells = []
            for saved in withb.values():
                cells += eta_cells(_jobs(saved, lambda j, f=factor: with_faults(j, f)))
            rows[f"{rule}, faults x{factor:g}"] = cells
        rows[f"{rule}, measured seconds per batch"] = [
            c for s in withb.values() for c in eta_cells(_jobs(s, measured_exactly))
        ]
    rm.thread_pace = today
    print("\n2-3. ETA samples within ±25% with the budget, by pace rule and price: for each set of runs")
    print("(" + "; ".join(withb) + "), from 25% of the run and from 25% reported")
    for name, cells in rows.items():
        print(f"{name:<52}" + "".join(f"{c.split(' ')[-1].strip('()'):>8}" for c in cells))


if __name__ == "__main__":
    main()
