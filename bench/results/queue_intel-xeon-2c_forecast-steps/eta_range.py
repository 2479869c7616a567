"""The ETA's 90% range (engine.remaining.ETA_RATIOS): the 5th and 95th percentiles of the time that actually
remained over the estimate, by the estimate's basis, over every ETA sample of the AMD host's saved
`bench queue --forecast` runs replayed by today's estimator (their plans repriced as today's submit makes
them: replan.py), then how often the range held on this folder's held-out runs (the Intel host), from the
first sample on and from 25% of each run on.

    PYTHONPATH=. python bench/results/queue_intel-xeon-2c_forecast-steps/eta_range.py
"""

from __future__ import annotations

import glob
import json
import os
import statistics
import sys
from typing import Any

sys.path.insert(0, os.path.dirname(__file__))

from replan import repriced

from advisor.engine.remaining import ETA_RATIOS
from bench.queue_forecast import replay

RESULTS = "bench/results"


def samples(paths: list[str], commit: str | None) -> list[dict[str, Any]]:
    """Each replayed ETA sample with its estimate, the time that actually remained and how far in it was."""
    found = []
    for path in paths:
        with open(path) as f:
            run = json.load(f)
        if "jobs" not in run:
            continue
        again = replay(repriced(run, commit) if commit else run)
        found += [e for j in again["jobs"] for e in j["eta"] if e["actual"] > 0 and e["predicted"] > 0]
    return found


def quantiles(ratios: list[float]) -> tuple[float, float]:
    cuts = statistics.quantiles(ratios, n=20, method="inclusive")
    return round(cuts[0], 2), round(cuts[-1], 2)


def covered(found: list[dict[str, Any]], ranges: dict[str, tuple[float, float]], start: float) -> str:
    rows = [e for e in found if e["elapsed_share"] >= start]
    inside = 0
    for e in rows:
        low, high = ranges["progress" if e["basis"] == "limit" else e["basis"]]
        inside += e["predicted"] * low <= e["actual"] <= e["predicted"] * high
    return f"{inside}/{len(rows)} ({inside / len(rows):.0%})"


def main() -> None:
    amd = sorted(
        {*glob.glob(f"{RESULTS}/queue_amd-epyc-2c_forecast*/**/*.json", recursive=True)}
        - {*glob.glob(f"{RESULTS}/queue_amd-epyc-2c_forecast*/**/*.log", recursive=True)}
    )
    built = samples(amd, "today")
    ranges = {}
    for basis in ("plan", "progress"):
        ratios = [e["actual"] / e["predicted"] for e in built if e["basis"] == basis]
        ranges[basis] = quantiles(ratios)
        print(f"{basis}: {len(ratios)} samples of {len(amd)} AMD runs, 90% range x{ranges[basis]}")
    print(f"in the code (engine.remaining.ETA_RATIOS): {ETA_RATIOS}")
    held_out = sorted(glob.glob(f"{RESULTS}/queue_intel-xeon-2c_forecast-steps/held-out/*.json"))
    found = samples(held_out, None)
    print(f"held out ({len(held_out)} Intel runs): within the range {covered(found, ETA_RATIOS, 0.0)} of all")
    print(f"  samples, {covered(found, ETA_RATIOS, 0.25)} from 25% of each run on")
    widths = [ETA_RATIOS[b][1] / ETA_RATIOS[b][0] for b in ETA_RATIOS]
    print(f"  width (high / low): {', '.join(f'{w:.1f}' for w in widths)}")


if __name__ == "__main__":
    main()
