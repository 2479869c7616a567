"""Would a cold optimiser step price the saved runs better? Each quiet row of a saved `bench generalise` run
is priced as today (the median of the merged profile's members' prices), and again with every Adam-like step
made cold: the member's own optimiser seconds times the cold/warm ratio of `adam_cold.txt` at the step's
parameter count (log-interpolated; 1 at 1,000 parameters and below, where the step is its launches). Run from
the repository root:

    PYTHONPATH=. python bench/results/generalise_amd-epyc-2c_evaluation-12/cold_optimizer.py
"""

from __future__ import annotations

import itertools
import json
import math
import statistics
from pathlib import Path

from advisor.engine import costmodel
from advisor.engine.costmodel import factor_of, step_cost, with_current_factor
from advisor.engine.profile import at_threads, interpolate, merge, trusted

# (parameters, cold / warm) from adam_cold.txt, with 1 at 1,000 parameters
RATIOS = ((1e3, 1.0), (3e4, 2.39), (1e5, 1.99), (3e5, 1.69), (1e6, 1.26), (3e6, 1.03), (1.2e7, 1.02))
RUNS = [
    "generalise_amd-epyc-2c_evaluation-5",
    "generalise_amd-epyc-2c_evaluation-6-quiet",
    "generalise_amd-epyc-2c_evaluation-7",
    "generalise_amd-epyc-2c_evaluation-8",
    "generalise_amd-epyc-2c_evaluation-12",
    "generalise_intel-xeon-2c_evaluation-10",
    "generalise_intel-xeon-2c_evaluation-11",
]


def ratio(parameters: float) -> float:
    if parameters <= RATIOS[0][0]:
        return 1.0
    for (a, ra), (b, rb) in itertools.pairwise(RATIOS):
        if parameters <= b:
            share = (math.log(parameters) - math.log(a)) / (math.log(b) - math.log(a))
            return ra + (rb - ra) * share
    return RATIOS[-1][1]


def summary(errors: list[float]) -> str:
    within = sum(abs(e) <= 0.25 for e in errors) / len(errors)
    middle = statistics.median(abs(e) for e in errors)
    return f"{within:.0%} within ±25%, median |error| {middle:.1%}, signed {statistics.median(errors):+.1%}"


def main() -> None:
    for run in RUNS:
        saved = json.loads(Path("bench/results", run, "run.json").read_text())
        rows = json.loads(Path("bench/results", run, "result.json").read_text())["rows"]
        profiles = [with_current_factor(p) for p in saved["profiles"]]
        merged = merge([p for p in profiles if trusted(p)] or profiles)
        members = [with_current_factor(m) for m in merged.get("members") or [merged]]
        by_name = {c["name"]: c for c in saved["configurations"]}
        today, cold = [], []
        for row in (r for r in rows if r["quiet"]):
            c, threads = by_name[row["name"]], int(row["threads"])
            candidate, batch = c["candidate"], int(c["batch"])
            params = sum(costmodel._parameters(candidate, n) for n in candidate["networks"])
            adam = str(candidate["training"].get("optimizer") or "sgd") in costmodel._ADAM_LIKE
            prices, colder = [], []
            for m in members:
                price = step_cost(candidate, batch_size=batch, threads=threads, profile=m).seconds
                warm = interpolate(at_threads(m, threads)["optimizer"]["adam"], params) if adam else 0.0
                prices.append(price)
                colder.append(price + factor_of(m) * warm * (ratio(params) - 1))
            measured = row["median"]
            today.append(statistics.median(prices) / measured - 1)
            cold.append(statistics.median(colder) / measured - 1)
        print(f"{run}: {len(today)} rows; today {summary(today)}; cold {summary(cold)}")


if __name__ == "__main__":
    main()
