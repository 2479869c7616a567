"""The ETA's pace rule before and after (engine.remaining.LATEST_PACE_CAP): every saved `bench queue
--forecast` run replayed by today's estimator (bench.queue_forecast.replay), then by the same estimator with
the rule before it (each step ahead at the median of its thread count's finished steps, the job's pace one
vote); each with how often the ETA's 90% range (ETA_RATIOS, fitted on the rule before) held. Nothing is
measured; the rule is patched in this process only.

Rerun: python bench/results/queue_intel-xeon-2c_grid/replay.py
"""

from __future__ import annotations

import json
import statistics
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))

import advisor.engine.remaining as rm  # noqa: E402
from bench.queue_forecast import JOB_LENGTHS, replay, score  # noqa: E402

HERE = Path(__file__).resolve().parent
SETS = {
    "default sweeps, every earlier run (65)": [
        p for p in sorted((ROOT / "bench/results").glob("queue_*/**/*.json")) if HERE not in p.parents
    ],
    "grids, built on (3)": sorted(HERE.glob("runs/build-*.json")),
    "grids, held out (2)": sorted(HERE.glob("runs/held-out-grid-*.json")),
    "default sweeps, held out (2)": sorted(HERE.glob("runs/held-out-default-*.json")),
}
KEYS = {
    "eta_from_25pct_of_run": "from 25% of the run",
    "eta_from_25pct_reported": "from 25% reported",
    **{f"eta_from_25pct_of_run_jobs_{name}": f"jobs {name.replace('_', ' ')}" for name, _, _ in JOB_LENGTHS},
}
TODAY = rm.LATEST_PACE_CAP


def with_cap(cap: float) -> None:
    """The pace rule at `cap`; `median` (cap 0) is the rule before: a thread count's median pace."""
    rm.LATEST_PACE_CAP = cap
    if cap == 0:
        rm._paces_by_threads = _median_rule


def _median_rule(plan: rm.WorkPlan, marks: Any, pace: float) -> Callable[[int], float]:
    seen: dict[int, list[float]] = {}
    for k, start, seconds in rm._whole_steps(marks):
        planned = plan.step_s(k)
        threads = start.threads
        if threads is None and k < len(plan.threads):
            threads = plan.threads[k]
        if threads is not None and planned > 0:
            seen.setdefault(threads, []).append(seconds / planned)
    paces = {t: statistics.median([*r, pace]) for t, r in seen.items()}
    now = marks[-1].threads if marks else None

    def pace_of(k: int) -> float:
        threads = now if k == int(marks[-1].done) and now is not None else None
        if threads is None and k < len(plan.threads):
            threads = plan.threads[k]
        return pace if threads is None else paces.get(threads, pace)

    return pace_of


def _grid(run: dict[str, Any]) -> bool:
    """A run of explicit grids (`--grid`), which later folders saved: not a default sweep."""
    return any(((j.get("planned") or {}).get("sweep") or {}).get("batch_sizes") for j in run["jobs"])


def _ranged(e: dict[str, Any]) -> bool:
    """A sample the ETA's 90% range speaks for: an estimate by plan or progress (not capped by the limit)."""
    return e["actual"] > 0 and e["predicted"] > 0 and e["basis"] in rm.ETA_RATIOS


def _in_range(e: dict[str, Any]) -> bool:
    """Whether the time that actually remained fell inside the estimate's 90% range (ETA_RATIOS)."""
    low, high = rm.ETA_RATIOS[e["basis"]]
    return bool(e["predicted"] * low <= e["actual"] <= e["predicted"] * high)


def main() -> None:
    today = rm._paces_by_threads
    for name, paths in SETS.items():
        runs = [json.loads(p.read_text()) for p in paths]
        runs = [r for r in runs if "jobs" in r and (name.startswith("grids") or not _grid(r))]
        if not runs:
            continue
        print(f"\n{name}")
        print(f"{'rule':<26}" + "".join(f"{label:>22}" for label in [*KEYS.values(), "90% range held"]))
        for rule, cap in (("before: the median", 0.0), (f"today: latest, cap {TODAY:g}x", TODAY)):
            rm._paces_by_threads = today
            with_cap(cap)
            again = [replay(run) for run in runs]
            cells = []
            for key in KEYS:
                inside = total = 0
                for run in again:
                    s = score(run).get(key, {})
                    inside, total = inside + s.get("within", 0), total + s.get("n", 0)
                cells.append(f"{inside}/{total} ({inside / total:.0%})" if total else "—")
            held = [_in_range(e) for run in again for j in run["jobs"] for e in j["eta"] if _ranged(e)]
            cells.append(f"{sum(held) / len(held):.1%}" if held else "—")
            print(f"{rule:<26}" + "".join(f"{c:>22}" for c in cells))
    rm._paces_by_threads, rm.LATEST_PACE_CAP = today, TODAY


if __name__ == "__main__":
    main()
