"""A saved `bench queue --forecast` run with its plans' configurations priced as a given commit's submit
prices them, so that that commit's estimator replays the run as it would have run it. Each stored
configuration's seconds are inverted through the form its run used to its estimated seconds per batch p,
then priced again:

- `today RUN.json`, for a run stored before today's form (`../queue_amd-epyc-2c_forecast-tail/`): priced
  by today's `sweepplan.configuration_seconds`, with no finishing tail and a re-measure's second child as
  long as the first child's start-up;
- `6224f46 RUN.json`, for a run stored with today's form (`held-out/`): priced by the form before,
  0.15 + (w + 1) p + max(min_iterations p, min_seconds + p), for 6224f46's estimator.

    PYTHONPATH=. python bench/results/queue_intel-xeon-2c_forecast-steps/replan.py today RUN.json > NEW.json
    PYTHONPATH=. python -m bench queue --from NEW.json   # in this checkout, or in one of 6224f46
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any

from advisor.engine.sweepplan import FINISH_S, SweepPlan, configuration_seconds, sweep_from_json

Priced = Callable[[float, SweepPlan], float]


def before(p: float, sweep: SweepPlan) -> float:
    return 0.15 + (sweep.warmup + 1) * p + max(sweep.min_iterations * p, sweep.min_seconds + p)


def per_batch(seconds: float, sweep: SweepPlan, form: Priced) -> float:
    """The p whose configuration `form` priced at `seconds` (both forms rise with p: bisection)."""
    lo, hi = 0.0, 100.0
    for _ in range(80):
        mid = (lo + hi) / 2.0
        lo, hi = (mid, hi) if form(mid, sweep) < seconds else (lo, mid)
    return lo


def repriced(run: dict[str, Any], commit: str) -> dict[str, Any]:
    """`run` (changed in place) with its sweeps' plans as `commit`'s submit would have made them."""
    stored, priced = {"today": (before, configuration_seconds), "6224f46": (configuration_seconds, before)}[
        commit
    ]
    for job in run["jobs"]:
        plan = job.get("planned")
        sweep = sweep_from_json(plan)
        if sweep is None:
            continue
        plan["steps"] = [priced(per_batch(s, sweep, stored), sweep) for s in plan["steps"]]
        plan["finish_s"] = FINISH_S
        plan["restart_startup_s"] = plan["startup_s"]
    return run


def main(commit: str, path: str) -> None:
    with open(path) as f:
        json.dump(repriced(json.load(f), commit), sys.stdout)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
